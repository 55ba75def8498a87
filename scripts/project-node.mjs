// The project's Node: the major named in .nvmrc, which is the one Electron bundles. `npm start` and `npm test`
// run under it even when the machine's Node is another major (Debian 12 ships Node 20, end of life): the
// registry's `node` package ships real binaries, installed once into ~/.cache/tally/node-<major>.
// Written for any Node >= 18, since it is what runs before the switch.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The Node major the project runs on (.nvmrc). */
export const wantedMajor = readFileSync(join(root, '.nvmrc'), 'utf8').trim().replace(/^v/, '').split('.')[0];

/** Folder holding the project's `node` binary (installed on first use), or null when this Node is that major. */
export function projectNodeBinDir() {
  if (process.versions.node.split('.')[0] === wantedMajor) return null;
  const prefix = join(process.env.TALLY_NODE_CACHE || join(homedir(), '.cache', 'tally'), `node-${wantedMajor}`);
  const binDir = join(prefix, 'node_modules', '.bin');
  const works = () => spawnSync(join(binDir, 'node'), ['--version']).status === 0;
  if (!existsSync(join(binDir, 'node')) || !works()) {
    process.stderr.write(
      `Node ${process.versions.node} is not the project's Node ${wantedMajor} (.nvmrc): installing node@${wantedMajor} into ${prefix}\n`,
    );
    mkdirSync(prefix, { recursive: true });
    const r = spawnSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-audit',
        '--no-fund',
        '--no-save',
        // One quick retry, not npm's default of two with up to a minute between: offline, say so in seconds.
        '--fetch-retries=1',
        '--fetch-retry-mintimeout=1000',
        '--fetch-retry-maxtimeout=3000',
        `node@${wantedMajor}`,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        encoding: 'utf8',
      },
    );
    if (r.status !== 0 || !works()) {
      process.stderr.write(`Could not install node@${wantedMajor}: ${npmReason(r.stderr || '', r.error)}\n`);
      process.exit(1);
    }
  }
  return binDir;
}

/**
 * Why npm failed, in one line: its network or error line (npm's last line only says where its log is), with
 * what an offline machine needs to hear.
 */
export function npmReason(stderr, spawnError) {
  if (spawnError) return `npm could not be run (${spawnError.message})`;
  const lines = stderr
    .split('\n')
    .map((line) => line.replace(/^npm (error|ERR!)\s*/, '').trim())
    .filter((line) => line !== '' && !/complete log of this run|^A complete log/i.test(line));
  const network = lines.find((line) =>
    /\b(ENOTFOUND|EAI_AGAIN|ENETUNREACH|ECONNREFUSED|ETIMEDOUT|ECONNRESET)\b/.test(line),
  );
  if (network) {
    return `the package registry cannot be reached (${network.replace(/^(code|errno)\s+/, '')}): connect to the network, or install Node ${wantedMajor} yourself (nvm, fnm and Volta read .nvmrc)`;
  }
  const message = lines.find((line) => !/^(code|errno|syscall)\b/.test(line)) ?? lines[0];
  return message ?? 'npm failed without saying why';
}

/**
 * Re-runs the current script under the project's Node when this one is another major, with that Node first on
 * PATH for everything it starts (npm, vitest, tsc); returns only when already on the right major.
 */
export function ensureProjectNode() {
  const binDir = projectNodeBinDir();
  if (!binDir) return;
  const env = { ...process.env, PATH: `${binDir}${process.platform === 'win32' ? ';' : ':'}${process.env.PATH ?? ''}` };
  const r = spawnSync(join(binDir, 'node'), process.argv.slice(1), { stdio: 'inherit', env });
  process.exit(r.status ?? 1);
}

// `node scripts/project-node.mjs`: prints the folder to put first on PATH (empty when none is needed).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`${projectNodeBinDir() ?? ''}\n`);
}
