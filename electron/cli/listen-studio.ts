/**
 * `tally listen --team …`: the flags of studio mode, checked before anything starts, the publisher the receive
 * service runs to share every saved recording with the team, and its lines in listen's output.
 */
import { ConfigError } from '../core/errors.js';
import { lineLogger } from '../core/logger.js';
import type { PublisherSetup } from '../core/receive/receive-service.js';
import { resolveTeamCredentials } from '../core/studio/team-credentials.js';
import type { StoreSpec, StudioPublisher } from '../core/studio/publisher.js';
import { parseS3Url, s3FromEnv } from '../core/studio/store.js';
import {
  DEFAULT_RETENTION_MS,
  parseReplicas,
  parseRetention,
  parseTeamUrls,
  teamServerList,
  type TeamCredentials,
} from '../core/studio/team.js';
import type { CommandIo } from './command.js';
import { UsageError } from './command.js';
import { openCredentialStore } from './context.js';
import { createStudioPrinter } from './studio-output.js';

export interface StudioSetup {
  url: URL;
  /** Every server of a team cluster (`--team a,b,c`), `url` first. */
  servers: URL[];
  /** The same as the settings keep them (`nats://host:port` each), for pipelineOptions. */
  serverList: string[];
  /** `--replicas`: the cluster's copies of each stream and store (undefined: as they are, 1 when new). */
  replicas?: number;
  credentials: TeamCredentials | null;
  store: StoreSpec;
  /** --store as given (`nats` or s3://...), for pipelineOptions. */
  storeFlag: string;
  retentionMs: number;
}

/** null without --team; a UsageError for --store / --retention without it or with a bad value. */
export async function studioSetup(
  values: { team?: string; store?: string; retention?: string; replicas?: string },
  io: Pick<CommandIo, 'env'>,
): Promise<StudioSetup | null> {
  if (values.team === undefined) {
    if (values.store !== undefined) throw new UsageError('--store needs --team.');
    if (values.retention !== undefined) throw new UsageError('--retention needs --team.');
    if (values.replicas !== undefined) throw new UsageError('--replicas needs --team.');
    return null;
  }
  let url: URL;
  let servers: URL[];
  let replicas: number | undefined;
  let store: StoreSpec = { kind: 'nats' };
  let retentionMs = DEFAULT_RETENTION_MS;
  try {
    ({ url, servers } = parseTeamUrls(values.team));
    if (values.replicas !== undefined) replicas = parseReplicas(values.replicas);
    if (values.store !== undefined && values.store !== 'nats') {
      store = { kind: 's3', ...parseS3Url(values.store), ...s3FromEnv(io.env) };
    }
    if (values.retention !== undefined) retentionMs = parseRetention(values.retention);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const credentials = await resolveTeamCredentials(url, io.env, openCredentialStore()).catch((error: unknown) => {
    // No keychain here is fine for an open team server; a damaged entry or a half-set environment is not.
    if (error instanceof ConfigError && !/damaged|TALLY_TEAM/.test(error.message)) return null;
    throw error;
  });
  return {
    url,
    servers,
    serverList: teamServerList(servers),
    ...(replicas ? { replicas } : {}),
    credentials,
    store,
    storeFlag: values.store ?? 'nats',
    retentionMs,
  };
}

/** The publisher the receive service runs beside the pipeline (`--team`), with listen's log lines. */
export function publisherSetup(setup: StudioSetup, stateDir: string, io: CommandIo): PublisherSetup {
  return {
    key: JSON.stringify([setup.servers.map((u) => u.href), setup.replicas, setup.storeFlag, setup.retentionMs]),
    options: {
      url: setup.url,
      servers: setup.servers,
      ...(setup.replicas ? { replicas: setup.replicas } : {}),
      credentials: setup.credentials,
      store: setup.store,
      retentionMs: setup.retentionMs,
      stateDir,
      log: lineLogger((line) => io.stderr.write(`tally listen: ${line}\n`)),
      // After refused credentials, each new try reads them again: "tally login --team" meanwhile fixes it.
      reloadCredentials: () => resolveTeamCredentials(setup.url, io.env, keychainOrNull()),
      ...(io.env.TALLY_TEAM_RETRY_MS ? { retry: { baseDelayMs: Number(io.env.TALLY_TEAM_RETRY_MS) } } : {}),
      // Tests: how soon a receiver killed mid-download leaves its recordings to the others (default 10 min).
      ...(io.env.TALLY_TEAM_STALE_CLAIM_MS ? { staleClaimMs: Number(io.env.TALLY_TEAM_STALE_CLAIM_MS) } : {}),
    },
  };
}

/**
 * Prints what the publisher does, in listen's output (human lines or NDJSON), through `out`: listen's own
 * writer, which gathers each turn's lines into one write (a line per recording shared, written on its own,
 * was a system call each).
 */
export function printPublisher(
  publisher: StudioPublisher,
  io: CommandIo,
  ndjson: boolean,
  out: { write(text: string): unknown } = io.stdout,
): void {
  const printer = createStudioPrinter({ out, err: io.stderr, ndjson, prefix: 'tally listen' });
  publisher.on('connected', (info) => printer.connected(info.url));
  publisher.on('waiting', (info) => printer.waiting(info));
  publisher.on('connection', (state) => printer.connection(state));
  publisher.on('refused', ({ error, retryInMs }) => printer.refused({ message: error.message, retryInMs }));
  publisher.on('published', (e) => printer.published(e));
  publisher.on('warning', (w) => printer.warning(w));
}

function keychainOrNull() {
  try {
    return openCredentialStore();
  } catch {
    return null;
  }
}
