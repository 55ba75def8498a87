/**
 * Which program holds a TCP port, when the OS says: on Linux the listening socket's inode is read from
 * /proc/net/tcp{,6} and looked up among the file descriptors of the processes this user may see. Elsewhere (or
 * when the holder belongs to another user) the answer is null and the message says "another program".
 */
import { readdir, readFile, readlink } from 'node:fs/promises';

export interface PortHolder {
  pid: number;
  /** The program's name as the OS gives it (`comm`), e.g. `nginx`. */
  program: string;
  /**
   * When the holder is another Tally: which face (`tally listen`, `tally serve`, `the tray app`). Its program is
   * the runtime (`node`), which would tell a producer nothing.
   */
  tally?: string;
}

/** Which Tally a process is, from its command line (argv as /proc gives it), or undefined when it is none. */
export function tallyFace(program: string, argv: readonly string[]): string | undefined {
  // The packaged tray app's executable is named tally (electron-builder.yml executableName).
  if (program === 'tally') return 'the tray app';
  const script = argv[1]?.split('/').pop();
  if (script !== 'tally' && script !== 'tally.js') return undefined;
  const command = argv[2];
  return command && /^[a-z]+$/.test(command) ? `tally ${command}` : 'tally';
}

/** /proc/net/tcp's state column for a listening socket. */
const LISTEN = '0A';

/** The inodes of sockets listening on `port` in one /proc/net table. */
function listeningInodes(table: string, port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const local = cols[1];
    if (!local || cols[3] !== LISTEN || !local.endsWith(`:${hexPort}`)) continue;
    const inode = cols[9];
    if (inode && inode !== '0') inodes.add(inode);
  }
  return inodes;
}

/**
 * The program's name as a producer knows it: the executable's file name (`nginx`, `node`), else the process's
 * own name (`comm`, which a runtime may set to a thread name such as `MainThread`).
 */
async function programName(procRoot: string, pid: string): Promise<string> {
  const exe = await readlink(`${procRoot}/${pid}/exe`).catch(() => '');
  const name = exe
    .replace(/ \(deleted\)$/, '')
    .split('/')
    .pop();
  if (name) return name;
  const comm = await readFile(`${procRoot}/${pid}/comm`, 'utf8').catch(() => '');
  return comm.trim() || 'an unnamed program';
}

/** The process holding a listening TCP socket on `port`, or null when the OS does not say (or nobody does). */
export async function findPortHolder(port: number, procRoot = '/proc'): Promise<PortHolder | null> {
  if (process.platform !== 'linux' || !Number.isInteger(port) || port <= 0) return null;
  const inodes = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    const text = await readFile(`${procRoot}/net/${table}`, 'utf8').catch(() => '');
    for (const inode of listeningInodes(text, port)) inodes.add(inode);
  }
  if (inodes.size === 0) return null;
  const wanted = new Set([...inodes].map((i) => `socket:[${i}]`));
  const pids = (await readdir(procRoot).catch(() => [] as string[])).filter((d) => /^\d+$/.test(d));
  for (const pid of pids) {
    const fds = await readdir(`${procRoot}/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`${procRoot}/${pid}/fd/${fd}`).catch(() => '');
      if (!wanted.has(target)) continue;
      const program = await programName(procRoot, pid);
      const argv = (await readFile(`${procRoot}/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
      const tally = tallyFace(program, argv);
      return tally ? { pid: Number(pid), program, tally } : { pid: Number(pid), program };
    }
  }
  return null;
}
