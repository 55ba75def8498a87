/**
 * A test-only preload for a real `tally follow` child (`node --import` through NODE_OPTIONS; never part of a
 * build): it wraps fs/promises' link and rename so the process kills itself with SIGKILL at the very instant a
 * verified mirror part got its final name (the link or rename from `*.part` to the recording's name returned),
 * before the member writes "saved" to its ledger and removes the part's resume record. Set by environment:
 *
 *   TALLY_TEST_KILL_AT_FINAL_NAME=1   kill at that instant (only the run that should crash sets it)
 *   TALLY_TEST_NO_HARD_LINKS=1        refuse hard links with EPERM, as FAT, exFAT and some network shares do, so
 *                                     the member places the file by rename instead of by link
 *
 * Node's builtin ESM named exports follow the builtin module's own object after syncBuiltinESMExports(), so
 * the CLI's `import { link, rename } from 'node:fs/promises'` gets the wrapped functions.
 */
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';

const kill = process.env.TALLY_TEST_KILL_AT_FINAL_NAME === '1';
const noHardLinks = process.env.TALLY_TEST_NO_HARD_LINKS === '1';
const originalLink = fsp.link;
const originalRename = fsp.rename;

/** A part (`….part`) taking its final name: not a sidecar's `.tmp` → `.resume` nor anything else. */
function finalName(from: unknown, to: unknown): boolean {
  return String(from).endsWith('.part') && !/\.(part|resume|tmp)$/.test(String(to));
}

function killedAfter(from: unknown, to: unknown): void {
  if (kill && finalName(from, to)) process.kill(process.pid, 'SIGKILL');
}

fsp.link = async (from, to) => {
  if (noHardLinks) {
    throw Object.assign(new Error(`EPERM: operation not permitted, link '${String(from)}' -> '${String(to)}'`), {
      code: 'EPERM',
      errno: -1,
      syscall: 'link',
    });
  }
  await originalLink(from, to);
  killedAfter(from, to);
};

fsp.rename = async (from, to) => {
  await originalRename(from, to);
  killedAfter(from, to);
};

syncBuiltinESMExports();
