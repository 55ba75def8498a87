/**
 * One text a producer can paste into a bug report: versions, OS, the data folder, the health of what is
 * receiving, the journal's counts, the settings and the last log lines. Settings → Advanced → "Copy
 * diagnostics" and `tally doctor` print the same report. The settings file holds no secret by design, but a
 * URL can carry credentials and a log line can quote a request: the whole text passes through the same
 * redaction as the log (core/redact.ts), with the secrets in use (environment and keychain) named.
 */
import { readFile } from 'node:fs/promises';
import { arch, release } from 'node:os';
import { join } from 'node:path';
import { problemRecordingText, type HealthView } from '../health-view.js';
import { crashDumpFolder, listCrashDumps, readCrashes, type CrashDump } from '../crash-history.js';
import { lastLogLines, logFolder, type LogName } from '../log-file.js';
import type { CredentialStore } from '../credentials.js';
import { readNgrokTokenFile } from '../ngrok-token-file.js';
import { tokenCopyName, tokenFileName } from '../webhook/token.js';
import { redactSecrets } from '../redact.js';
import { TEAM_TOKEN_NAME } from '../studio/team-credentials.js';
export { secretsInEnv } from '../redact.js';
import { JOURNAL_FILE } from '../recordings/inbox.js';
import { parseLine } from '../recordings/journal-lines.js';
import type { Settings } from '../settings.js';
import { counted } from '../counted.js';

/** How many log lines of each face the report quotes. */
export const DIAGNOSTICS_LOG_LINES = 40;

/** The health part: what each running face said, or why there is none. */
export type DiagnosticsHealth = { who: string; health: HealthView | null; error?: string }[];

export interface DiagnosticsInput {
  /** Who made the report: `Tally (tray app)`, `tally serve`, `tally doctor`. */
  madeBy: string;
  version: string;
  home: string;
  settings: Settings;
  settingsWarnings?: readonly string[];
  /** Null: the face could not ask (said as such). */
  health: DiagnosticsHealth;
  /** Jobs per state in the journal, or null when there is none. */
  journal: Record<string, number> | null;
  /** Jobs per state in the demo's own journal (demo mode keeps its recordings apart), or null when there is none. */
  demoJournal?: Record<string, number> | null;
  logs: { name: LogName; lines: string[] }[];
  /** The tray app's recorded crashes and the local crash dumps (crashFacts), when known. */
  crashes?: CrashFacts;
  /** Secret values in use: each is replaced wherever it appears. */
  secrets: readonly string[];
  now?: Date;
}

/**
 * Every secret the keychain holds for Tally: the project secret, the ngrok authtoken and the team's user,
 * password or token (each field of its entry). What cannot be read is left out: the report still redacts by
 * pattern and by every secret this process registered (core/redact.ts).
 */
export async function keychainSecrets(store: CredentialStore): Promise<string[]> {
  const read = <T>(p: Promise<T>) => p.catch(() => null);
  const [project, ngrok, team] = await Promise.all([
    read(store.stored()),
    read(store.getToken('ngrok')),
    read(store.getToken(TEAM_TOKEN_NAME)),
  ]);
  const found = [project?.secret, ngrok, team];
  try {
    const entry = JSON.parse(team ?? 'null') as Record<string, unknown> | null;
    for (const [field, value] of Object.entries(entry ?? {})) if (field !== 'server') found.push(value as string);
  } catch {
    // Not JSON: the raw value above is what there is.
  }
  return found.filter((s): s is string => typeof s === 'string' && s.trim() !== '');
}

/**
 * The secrets kept in files of the state folder `home`: the ngrok authtoken file (without a keychain) and the
 * receiver's path tokens (`/hooks/…`, `/uploads/…`) and their copies. Read, never created.
 */
export async function stateFolderSecrets(home: string): Promise<string[]> {
  const files = (['hooks', 'uploads'] as const).flatMap((name) => [tokenFileName(name), tokenCopyName(name)]);
  const found = await Promise.all([
    readNgrokTokenFile(home).catch(() => null),
    ...files.map((file) => readFile(join(home, file), 'utf8').catch(() => null)),
  ]);
  return found.map((s) => s?.trim() ?? '').filter((s) => s !== '');
}

/** Jobs per state in the journal under `stateDir` (the last line of each recording counts), or null. */
export async function journalCounts(stateDir: string): Promise<Record<string, number> | null> {
  const text = await readFile(join(stateDir, JOURNAL_FILE), 'utf8').catch(() => null);
  if (text === null) return null;
  const latest = new Map<string, string>();
  for (const line of text.split('\n')) {
    const job = line.trim() === '' ? null : parseLine(line);
    if (job) latest.set(job.key, job.state);
  }
  const counts: Record<string, number> = {};
  for (const state of latest.values()) counts[state] = (counts[state] ?? 0) + 1;
  return counts;
}

/** The last lines of the logs of `names` under `home` (faces that never ran are left out). */
export async function recentLogs(home: string, names: readonly LogName[]): Promise<DiagnosticsInput['logs']> {
  const logs = await Promise.all(
    names.map(async (name) => ({ name, lines: await lastLogLines(home, name, DIAGNOSTICS_LOG_LINES) })),
  );
  return logs.filter((log) => log.lines.length > 0);
}

/** The tray app's crash times and local minidumps under `home`. */
export interface CrashFacts {
  times: number[];
  dumps: CrashDump[];
  dumpFolder: string;
}

/** How many dumps the report names (newest first). */
const DUMPS_LISTED = 5;

/** Reads the crash history and lists the crash dumps of the data folder `home`. */
export function crashFacts(home: string): CrashFacts {
  return { times: readCrashes(home), dumps: listCrashDumps(home), dumpFolder: crashDumpFolder(home) };
}

function crashLines(crashes: CrashFacts): string[] {
  const times = crashes.times.slice(-5).map((t) => new Date(t).toISOString());
  return [
    `Crashes of the tray app: ${crashes.times.length === 0 ? 'none recorded' : `${crashes.times.length} recorded, the last at ${times.join(', ')}`}`,
    `Crash dumps (kept on this computer, never uploaded) in ${crashes.dumpFolder}: ${crashes.dumps.length === 0 ? 'none' : crashes.dumps.length}`,
    ...crashes.dumps
      .slice(0, DUMPS_LISTED)
      .map((d) => `  ${d.at.toISOString()}  ${d.path} (${Math.ceil(d.bytes / 1024)} KiB)`),
  ];
}

function healthLines(health: DiagnosticsHealth): string[] {
  if (health.length === 0) return ['  Nothing is receiving on this data folder right now.'];
  const out: string[] = [];
  for (const { who, health: h, error } of health) {
    if (!h) {
      out.push(`  ${who}: no answer (${error ?? 'unknown'})`);
      continue;
    }
    out.push(`  ${who}: ${h.state}, ${counted(h.problems, 'problem', 'problems')}`);
    for (const c of h.components) {
      out.push(
        `    ${c.state.padEnd(7)} ${c.id.padEnd(12)} ${c.reason}${c.action && c.state !== 'ok' ? ` → ${c.action}` : ''}`,
      );
    }
    // Times as ISO: a report is read on another computer, in another time zone.
    for (const p of h.problemRecordings ?? []) out.push(`    problem ${problemRecordingText(p, (iso) => iso)}`);
    if ((h.moreProblems ?? 0) > 0) out.push(`    … and ${h.moreProblems} more`);
  }
  return out;
}

/** The report as one redacted text. */
export function diagnosticsText(input: DiagnosticsInput): string {
  const now = input.now ?? new Date();
  const counted = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([state, n]) => `${n} ${state}`)
      .join(', ') || 'empty';
  const demo = input.demoJournal ? counted(input.demoJournal) : null;
  // The demo keeps its own journal: "no journal yet" alone would hide the recordings a demo run holds.
  const journal = input.journal
    ? counted(input.journal)
    : demo === null
      ? 'no journal yet'
      : 'none yet for real recordings (only the demo’s, below)';
  const lines = [
    `Tally diagnostics, ${now.toISOString()} (${input.madeBy})`,
    '',
    `Tally ${input.version}; Node ${process.versions.node}${process.versions.electron ? `; Electron ${process.versions.electron}` : ''}`,
    `OS: ${process.platform} ${release()} ${arch()}`,
    `Data folder: ${input.home} (logs in ${logFolder(input.home)})`,
    '',
    'Health:',
    ...healthLines(input.health),
    '',
    `Recordings in the journal: ${journal}`,
    ...(demo === null ? [] : [`Recordings in the demo’s journal: ${demo}`]),
    '',
    ...(input.crashes ? [...crashLines(input.crashes), ''] : []),
    'Settings (secrets are kept in the OS keychain, never here):',
    ...JSON.stringify(input.settings, null, 2)
      .split('\n')
      .map((line) => `  ${line}`),
    ...(input.settingsWarnings?.length ? ['Settings warnings:', ...input.settingsWarnings.map((w) => `  ${w}`)] : []),
    ...input.logs.flatMap((log) => ['', `Last lines of the ${log.name} log:`, ...log.lines.map((l) => `  ${l}`)]),
    '',
  ];
  return redactSecrets(lines.join('\n'), input.secrets);
}
