#!/usr/bin/env node
// Entry point for the `tally` bin: runs the built CLI (npm's install step builds dist/ via `prepare`).
import { main } from '../dist/electron/cli.js';

const controller = new AbortController();
let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (stopping) process.exit(130);
    stopping = true;
    controller.abort();
  });
}
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: controller.signal,
});
process.exitCode = code;
