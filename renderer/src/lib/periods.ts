/**
 * Search periods: presets relative to "now" and the custom range from two datetime-local inputs.
 */

export type Preset = 'hour' | 'today' | 'week' | 'custom';
export const PRESETS: readonly Preset[] = ['hour', 'today', 'week', 'custom'];
/** Why a custom range cannot be searched (also the message key under `search.`). */
export type RangeProblem = 'rangeRequired' | 'rangeOrder';

export const HOUR = 3_600_000;

/** `YYYY-MM-DDTHH:mm` in local time, the value format of `<input type="datetime-local">`. */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** The period a preset stands for at `now` (ms); custom uses the two local date-time inputs. */
export function presetRange(
  preset: Preset,
  now: number,
  custom: { since: string; until: string } = { since: '', until: '' },
): { since: string; until: string } | RangeProblem {
  const iso = (ms: number) => new Date(ms).toISOString();
  switch (preset) {
    case 'hour':
      return { since: iso(now - HOUR), until: iso(now) };
    case 'today': {
      const midnight = new Date(now);
      midnight.setHours(0, 0, 0, 0);
      return { since: iso(midnight.getTime()), until: iso(now) };
    }
    case 'week':
      return { since: iso(now - 7 * 24 * HOUR), until: iso(now) };
    case 'custom': {
      // datetime-local values carry no offset: the Date constructor reads them as local time.
      const since = Date.parse(custom.since);
      const until = Date.parse(custom.until);
      if (Number.isNaN(since) || Number.isNaN(until)) return 'rangeRequired';
      if (since > until) return 'rangeOrder';
      return { since: iso(since), until: iso(until) };
    }
  }
}
