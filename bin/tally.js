#!/usr/bin/env -S node --max-semi-space-size=1
// Entry point for the `tally` bin: runs the built CLI (npm's install step builds dist/ via `prepare`).
import { main } from '../dist/electron/cli.js';
import { installCliCrashHandlers } from '../dist/electron/cli/crash.js';

// The first SIGINT/SIGTERM asks the running command to stop gracefully (journal flushed, part files kept);
// a second one, a moment later, forces the exit. Signals within the first second are not counted as that
// second request: `conf` pulls in `when-exit`, whose handler re-raises the same signal at once after its
// own cleanup, and that echo must not turn a graceful stop into a forced one.
//
// Whatever the servers do, every face ends within STOP_WITHIN_MS of the first signal (issue 30: `follow` said
// "stopped" and lived on for minutes, held by sockets a team server that never answered left open): what was
// acknowledged is already in the journal (fsynced before the answer), so an exit then loses nothing.
const STOP_WITHIN_MS = 9_000;
const controller = new AbortController();
let firstSignalAt = 0;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    const now = performance.now();
    if (firstSignalAt === 0) {
      firstSignalAt = now;
      // The reason is what the command's log says it stopped for: "tally listen stopped (SIGINT)".
      controller.abort(sig);
      setTimeout(() => {
        process.stderr.write(`tally: still stopping after ${STOP_WITHIN_MS / 1000} s; exiting now.\n`);
        process.exit(130);
      }, STOP_WITHIN_MS).unref();
    } else if (now - firstSignalAt > 1000) {
      process.exit(130);
    }
  });
}
// A reader that went away (`tally status | head -1`, `tally follow --ndjson | head -1`) is not a crash: the output
// simply ends there, and a long-running command is asked to stop the graceful way, as on Ctrl+C, exit code 0. Once
// the pipe is closed, a later write fails with ERR_STREAM_DESTROYED: the same news, said quietly too. Also for
// stderr (`2>&1 | head`): nothing more can be said there.
const readerGone = (error) => error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED';
for (const [stream, name] of [
  [process.stdout, 'stdout'],
  [process.stderr, 'stderr'],
]) {
  stream.on('error', (error) => {
    if (!readerGone(error)) throw error;
    controller.abort(`${name} closed: the reader went away`);
    process.exitCode ??= 0;
  });
}
// An error nobody caught is logged and said once; `listen` carries on after a lost promise and stops the
// graceful way (exit 70) after an uncaught exception (electron/cli/crash.ts).
installCliCrashHandlers({ process, stderr: process.stderr, stop: () => controller.abort('uncaught exception') });
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: controller.signal,
});
// A crash handler may have set 70 already: the command's own code does not hide it.
process.exitCode ??= code;
// The command is done: a handle a library left open (a socket to a server that accepted and never answered)
// must not keep the process alive. Unref'd, so a process with nothing left open exits at once, as before.
setTimeout(() => process.exit(), 1_000).unref();
