/** `tally --help` start-up to first output (target under 300 ms) beside a bare `node -e 0` as the floor. */
import { existsSync } from 'node:fs';
import { median, runCommand, type Benchmark } from './lib/harness.js';

const bench: Benchmark = async ({ quick }) => {
  if (!existsSync('dist/electron/cli.js')) throw new Error('build first: npm run build:cli');
  const runs = quick ? 5 : 20;
  const ours: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await runCommand(process.execPath, ['bin/tally.js', '--help']);
    if (r.code !== 0 || !r.stdout.includes('Usage: tally')) throw new Error(`tally --help failed: ${r.stderr}`);
    ours.push(r.ms);
    floor.push((await runCommand(process.execPath, ['-e', '0'])).ms);
  }
  return [
    {
      bench: 'cli-startup',
      metric: 'tally --help (median)',
      ours: median(ours),
      peer: median(floor),
      peerName: 'node -e 0',
      unit: 'ms',
      higherIsBetter: false,
      target: '< 300 ms',
    },
  ];
};
export default bench;
