/**
 * The file a log writes to, rolled over by size: lines go to `<folder>/<name>.<n>.log`, appended
 * synchronously (a line is on disk when the call returns: the last line before a crash is the one that
 * matters), and once the file holds `maxBytes` the next line starts `<name>.<n+1>.log`, the `keep` files
 * before it kept and older ones of this name removed.
 *
 * This replaced pino-roll, whose time-based naming pulls in all of date-fns at start-up: 300 modules and about
 * 5 MB of every `tally listen`'s memory (issue 22: under 80 MB) for a size rotation this file does in full.
 * A line that cannot be written (a full disk, a removed folder) is dropped, never thrown at the command
 * that logged it; the next line tries the file again.
 */
import {
  chmodSync,
  closeSync,
  fchmodSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

export interface RollingFileOptions {
  folder: string;
  /** Files are `<name>.<n>.log`. */
  name: string;
  /** Size at which the next line goes to a new file. */
  maxBytes: number;
  /** Older files kept beside the current one. */
  keep: number;
}

/** `<name>.<n>.log` → n, for files of this name only. */
export function logFileNumber(file: string, name: string): number | null {
  if (!file.startsWith(`${name}.`) || !file.endsWith('.log')) return null;
  const middle = file.slice(name.length + 1, -'.log'.length);
  return /^[1-9]\d{0,8}$/.test(middle) ? Number(middle) : null;
}

export class RollingFile {
  readonly #options: RollingFileOptions;
  #number: number;
  #size = 0;
  #fd: number | null = null;

  /** Opens (creating the folder) the highest-numbered file of `name`, or the next one when it is full. */
  constructor(options: RollingFileOptions) {
    this.#options = options;
    // Owner only (issue 32): a log can quote what a redaction pattern does not know, and it is nobody else's.
    mkdirSync(options.folder, { recursive: true, mode: 0o700 });
    chmodSync(options.folder, 0o700);
    const numbers = readdirSync(options.folder)
      .map((file) => logFileNumber(file, options.name))
      .filter((n) => n !== null);
    this.#number = Math.max(1, ...numbers);
    this.#open();
    if (this.#size >= options.maxBytes) this.#roll();
  }

  /** The file lines go to now. */
  get path(): string {
    return join(this.#options.folder, `${this.#options.name}.${this.#number}.log`);
  }

  /** Appends `line` (pino's destination interface). */
  write(line: string): boolean {
    const bytes = Buffer.from(line);
    try {
      if (this.#size > 0 && this.#size + bytes.length > this.#options.maxBytes) this.#roll();
      if (this.#fd === null) this.#open();
      let written = 0;
      while (written < bytes.length) written += writeSync(this.#fd as number, bytes, written);
      this.#size += written;
    } catch {
      this.#closeFd();
    }
    return true;
  }

  close(): void {
    this.#closeFd();
  }

  #open(): void {
    this.#fd = openSync(this.path, 'a', 0o600);
    // A file made by an older version (0644) is narrowed too.
    fchmodSync(this.#fd, 0o600);
    this.#size = statSync(this.path).size;
  }

  #closeFd(): void {
    if (this.#fd === null) return;
    const fd = this.#fd;
    this.#fd = null;
    try {
      closeSync(fd);
    } catch {
      // Already gone: nothing was buffered (every write is synchronous).
    }
  }

  #roll(): void {
    this.#closeFd();
    this.#number += 1;
    this.#open();
    const oldest = this.#number - this.#options.keep;
    for (const file of readdirSync(this.#options.folder)) {
      const n = logFileNumber(file, this.#options.name);
      if (n !== null && n < oldest) rmSync(join(this.#options.folder, file), { force: true });
    }
  }
}
