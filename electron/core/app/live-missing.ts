/**
 * The live twin of the gap report: channels that closed without their recording webhook (newest first, the last
 * 200), found as they happen by the expected-recordings check, and the gap report with them added.
 */
import type { GapReport, GapView } from '../../contract.js';
import type { MissingRecording } from '../pipeline/expected-recordings.js';
import type { GapReportResult } from '../recordings/gap-report.js';
import { gapView } from './core-messages.js';

export class LiveMissing {
  #missing: GapView[] = [];

  /** The channels found missing so far, newest first. */
  get list(): readonly GapView[] {
    return this.#missing;
  }

  add(m: MissingRecording): void {
    this.#missing = [{ channelId: m.channelId, endedAt: m.closedAt, live: true }, ...this.#missing].slice(0, 200);
  }

  /** The gap report with the live findings added (those the report names already, once). */
  report(last: GapReportResult | null): GapReport {
    const report = gapView(last);
    const known = new Set(report.missing.map((m) => m.channelId));
    const live = this.#missing.filter((m) => !known.has(m.channelId));
    return { ...report, missing: [...live, ...report.missing] };
  }
}
