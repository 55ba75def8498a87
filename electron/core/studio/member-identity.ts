/**
 * Who a studio member is on the team server. The durable consumer that remembers a member's place is named
 * after a random ID kept in the member's state folder (one per installation, folder and name), never after the
 * name alone: two computers that both call themselves `twin` (or carry the same host name, cloned from one
 * image) each get their own consumer and so every recording, instead of splitting them between them. The human
 * name stays as the consumer's description, the label the receiver's lag view shows.
 *
 * A small KV bucket says which members are live right now (renewed every few seconds, gone when a member
 * stops renewing). A second live member with the same ID (a state folder copied to another computer) is refused
 * at start with one line; another live member with the same name is allowed and warned about.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { note } from '../notes.js';
import { ConfigError } from '../errors.js';

export const MEMBERS_BUCKET = 'tally-studio-members';
/** A member that has not renewed its entry for this long is no longer live. */
export const PRESENCE_TTL_MS = 30_000;

export interface Presence {
  name: string;
  host: string;
  /** New at every start: tells this process apart from an earlier run of the same member. */
  instance: string;
  /**
   * Where the member's state folder is: the machine's ID, host name, device and inode. The state lock keeps a
   * second process of one place from running, so an entry of the same place is this member's own earlier run
   * (killed before its entry expired); a copied folder (another computer, or beside this one) is another place.
   */
  place: string;
  at: string;
}

/** Another computer follows the studio with this member's ID right now (its state folder was copied). */
export class MemberConflictError extends ConfigError {}

async function readOrNull(file: string): Promise<string | null> {
  return readFile(file, 'utf8').then(
    (text) => text.trim() || null,
    () => null,
  );
}

async function writeAtomically(file: string, text: string): Promise<void> {
  await writeFile(`${file}.tmp`, text, { mode: 0o600, flush: true });
  await rename(`${file}.tmp`, file);
}

/** The member's ID, created once in its state folder and kept from then on. */
export async function memberId(stateFolder: string): Promise<string> {
  const file = path.join(stateFolder, 'member-id');
  const known = await readOrNull(file);
  if (known && /^[a-z0-9]{8,32}$/.test(known)) return known;
  const id = randomBytes(8).toString('hex');
  await writeAtomically(file, id);
  return id;
}

/** The place of a state folder (see Presence.place). */
export async function memberPlace(stateFolder: string): Promise<string> {
  const machine = (await readOrNull('/etc/machine-id')) ?? '';
  const info = await stat(stateFolder);
  return `${machine}:${hostname()}:${info.dev}:${info.ino}`;
}

/** The durable consumer of a member: its ID, never its name. */
export function memberConsumer(id: string): string {
  return `member-${id}`;
}

const parsePresence = (value: unknown): Presence | null => {
  const p = value as Partial<Presence> | null;
  return p &&
    typeof p.name === 'string' &&
    typeof p.instance === 'string' &&
    typeof p.host === 'string' &&
    typeof p.place === 'string'
    ? (p as Presence)
    : null;
};

/**
 * This member's entry in the members bucket while it runs. `announce()` refuses a live twin of the same ID and
 * returns the other live members that share its name; `renew()` keeps the entry fresh and says when another
 * process took it over meanwhile (compare-and-set on the revision).
 */
export class MemberPresence {
  readonly #kv: KV;
  readonly #id: string;
  readonly #stateFolder: string;
  readonly #self: Presence;
  #revision = 0;

  private constructor(kv: KV, id: string, stateFolder: string, self: Presence) {
    this.#kv = kv;
    this.#id = id;
    this.#stateFolder = stateFolder;
    this.#self = self;
  }

  static async open(
    nc: NatsConnection,
    id: string,
    stateFolder: string,
    name: string,
    replicas = 1,
  ): Promise<MemberPresence> {
    const kv = await new Kvm(nc).create(MEMBERS_BUCKET, { history: 1, ttl: PRESENCE_TTL_MS, replicas });
    const self = {
      name,
      host: hostname(),
      instance: randomBytes(8).toString('hex'),
      place: await memberPlace(stateFolder),
      at: new Date().toISOString(),
    };
    return new MemberPresence(kv, id, stateFolder, self);
  }

  get id(): string {
    return this.#id;
  }

  /** Takes this member's entry; resolves with the other live members of the same name. */
  async announce(): Promise<Presence[]> {
    const entry = await this.#kv.get(this.#id);
    const live = entry?.operation === 'PUT' ? parsePresence(entry.json()) : null;
    // An entry still in the bucket is live (the bucket's max age drops one nobody renews; no clocks compared),
    // unless it is this member's own earlier run, killed before it could give its entry up.
    if (live && live.place !== this.#self.place) {
      throw new MemberConflictError(
        note('studioMemberTwin', { name: live.name, host: live.host, folder: this.#stateFolder }),
      );
    }
    this.#revision = await this.#kv.put(this.#id, JSON.stringify(this.#self));
    const namesakes: Presence[] = [];
    for await (const key of await this.#kv.keys()) {
      if (key === this.#id) continue;
      const other = await this.#kv.get(key).catch(() => null);
      const p = other?.operation === 'PUT' ? parsePresence(other.json()) : null;
      if (p && p.name === this.#self.name) namesakes.push(p);
    }
    return namesakes;
  }

  /** Refreshes the entry; resolves with the process that took it over, if one did. */
  async renew(): Promise<Presence | null> {
    const value = JSON.stringify({ ...this.#self, at: new Date().toISOString() });
    try {
      this.#revision = await this.#kv.update(this.#id, value, this.#revision);
      return null;
    } catch {
      const entry = await this.#kv.get(this.#id);
      const other = entry?.operation === 'PUT' ? parsePresence(entry.json()) : null;
      if (other && other.instance !== this.#self.instance) return other;
      // Expired (a long pause, a server restart): taken again.
      this.#revision = await this.#kv.put(this.#id, value);
      return null;
    }
  }

  /** Gives the entry up at a clean stop, so a restart elsewhere is not refused. */
  async leave(): Promise<void> {
    await this.#kv.delete(this.#id, { previousSeq: this.#revision }).catch(() => undefined);
  }
}
