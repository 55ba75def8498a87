/**
 * A small durable map, identity → latest record, as a JSON-lines file in the state folder (the one journal
 * opener, so a torn last line after `kill -9` is handled like everywhere else). The receiver keeps what it has
 * published in one; each follower keeps what it has started and mirrored in another. Appends are fsync'd before
 * they resolve, so "saved" in the ledger means the file is on disk under that name.
 */
import { JsonLinesAppender, openJsonLines } from '../jsonl-journal.js';

export interface LedgerRecord {
  identity: string;
  state: string;
  at: string;
  [key: string]: unknown;
}

export class Ledger<R extends LedgerRecord> {
  readonly #appender: JsonLinesAppender;
  readonly #records: Map<string, R>;

  private constructor(appender: JsonLinesAppender, records: Map<string, R>) {
    this.#appender = appender;
    this.#records = records;
  }

  static async open<R extends LedgerRecord>(
    dir: string,
    name: string,
    accept: (value: unknown) => value is R,
  ): Promise<Ledger<R>> {
    const records = new Map<string, R>();
    const opened = await openJsonLines(dir, name, (line) => {
      try {
        const value: unknown = JSON.parse(line);
        if (!accept(value)) return false;
        records.set(value.identity, value);
        return true;
      } catch {
        return false;
      }
    });
    return new Ledger<R>(new JsonLinesAppender(opened, 'studio ledger'), records);
  }

  get(identity: string): R | undefined {
    return this.#records.get(identity);
  }

  list(): R[] {
    return [...this.#records.values()];
  }

  /** Appends `record` (replacing the identity's previous one) and resolves once it is on disk. */
  put(record: R): Promise<void> {
    return this.#appender.append(record, () => this.#records.set(record.identity, record));
  }

  close(): Promise<void> {
    return this.#appender.close();
  }
}
