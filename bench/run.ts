/**
 * `npm run bench [-- --quick] [-- --only name]`: runs every bench/*.bench.ts and prints one table of our
 * figures beside their peers (curl, aria2c, nginx, a bare node:http responder) with the ratio, plus the
 * machine and versions. Timing never fails the run: the exit code only reflects a bench that crashed.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { hasCommand, runCommand, type Benchmark, type BenchRow } from './lib/harness.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const onlyIdx = argv.indexOf('--only');
const only = onlyIdx >= 0 ? argv[onlyIdx + 1] : undefined;

async function version(cmd: string, args: string[], pick: RegExp): Promise<string> {
  if (!(await hasCommand(cmd))) return 'not installed';
  const r = await runCommand(cmd, args).catch(() => null);
  const text = `${r?.stdout ?? ''}\n${r?.stderr ?? ''}`;
  return pick.exec(text)?.[1] ?? 'unknown';
}

function fmt(n: number | null, unit: string): string {
  if (n === null) return 'n/a';
  const digits = Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : 2;
  return `${n.toFixed(digits)} ${unit}`;
}

function ratio(row: BenchRow): string {
  if (row.peer === null || row.peer === 0) return 'n/a';
  const r = row.higherIsBetter ? row.ours / row.peer : row.peer / row.ours;
  return `${r.toFixed(2)}x`;
}

/** How long one bench may take (quick mode in CI runs each in seconds to a few minutes). */
const BENCH_DEADLINE_MS = (quick ? 10 : 120) * 60_000;

async function main(): Promise<void> {
  const dir = new URL('.', import.meta.url);
  const files = (await readdir(dir)).filter((f) => f.endsWith('.bench.ts')).sort();
  const rows: BenchRow[] = [];
  const failures: string[] = [];
  const machine = [
    `CPU: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, RAM ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `node ${process.version}; curl ${await version('curl', ['--version'], /curl (\S+)/)}; aria2c ${await version('aria2c', ['--version'], /aria2 version (\S+)/)}; nginx ${await version('/usr/sbin/nginx', ['-v'], /nginx\/(\S+)/)}; chromium ${await version('chromium', ['--version'], /Chromium (\S+)/)}`,
    `mode: ${quick ? 'quick (CI)' : 'full'}`,
  ];
  for (const file of files) {
    const name = file.replace(/\.bench\.ts$/, '');
    if (only && name !== only) continue;
    const tmp = await mkdtemp(join(tmpdir(), `tally-bench-${name}-`));
    process.stdout.write(`• ${name}…\n`);
    let timer: NodeJS.Timeout | undefined;
    try {
      const mod = (await import(pathToFileURL(join(dir.pathname, file)).href)) as { default: Benchmark };
      const run = mod.default({ quick, tmpDir: tmp, log: (l) => process.stdout.write(`    ${l}\n`) });
      // A bench waiting for a line that never comes must not hold CI until its own limit: it is a failure.
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`did not finish within ${BENCH_DEADLINE_MS / 60_000} min`)),
          BENCH_DEADLINE_MS,
        );
      });
      rows.push(...(await Promise.race([run, deadline])));
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    } finally {
      clearTimeout(timer);
      await rm(tmp, { recursive: true, force: true });
    }
  }

  const header = ['bench', 'metric', 'Tally', 'peer', 'peer figure', 'ratio', 'target'];
  const table = rows.map((r) => [
    r.bench,
    r.metric,
    fmt(r.ours, r.unit),
    r.peerName,
    fmt(r.peer, r.unit),
    ratio(r),
    r.target ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  console.log(`\n${machine.join('\n')}\n`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of table) console.log(line(row));
  for (const r of rows.filter((x) => x.note)) console.log(`  note (${r.bench} ${r.metric}): ${r.note}`);
  console.log('\nRatios: Tally relative to the peer, higher is better (for latency and memory: peer / Tally).');
  if (failures.length) {
    console.error(`\n${failures.length} benchmark(s) crashed:\n${failures.join('\n')}`);
    process.exitCode = 1;
  }
}

await main();
// A bench that missed its deadline may leave its servers behind: they must not keep this process alive.
process.exit();
