/**
 * Where the end-to-end tests write their screenshots. Every run writes them to test-results/screenshots (and
 * checks them there); with TALLY_UPDATE_SCREENSHOTS=1 they go to the committed ones in docs/screenshots instead,
 * so an ordinary test run leaves the working tree as it was (the Recordings view shows real save times).
 */
import { join } from 'node:path';

/** The screenshots folder under the repository `root`, as the file comment says. */
export function screenshotsFolder(root: string): string {
  return process.env.TALLY_UPDATE_SCREENSHOTS
    ? join(root, 'docs', 'screenshots')
    : join(root, 'test-results', 'screenshots');
}
