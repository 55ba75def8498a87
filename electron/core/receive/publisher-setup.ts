/**
 * A studio's receiver as a face asks for it with flags (`tally listen --team … --store … --retention …
 * --replicas …`): the flags read and checked before anything starts, the team credentials found (environment,
 * then the keychain entry bound to the first server), and the publisher setup the receive service runs beside
 * every pipeline it opens (`ReceiveService.publish`). Loaded only with those flags: it brings the NATS client.
 */
import type { CredentialStore } from '../credentials.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { StoreSpec } from '../studio/publisher.js';
import { parseS3Url, s3FromEnv } from '../studio/store.js';
import { resolveTeamCredentials } from '../studio/team-credentials.js';
import {
  DEFAULT_RETENTION_MS,
  parseReplicas,
  parseRetention,
  parseTeamUrls,
  teamServerList,
  type TeamCredentials,
} from '../studio/team.js';
import type { PublisherSetup } from './receive-service.js';

/** The studio flags as given (`--team` required; the others optional). */
export interface StudioReceiverFlags {
  team: string;
  store?: string;
  retention?: string;
  replicas?: string;
}

/** The studio a receiver shares with, read from its flags. */
export interface StudioReceiver {
  url: URL;
  /** Every server of a team cluster (`--team a,b,c`), `url` first. */
  servers: URL[];
  /** The same as the settings keep them (`nats://host:port` each), for the pipeline's studio spec. */
  serverList: string[];
  /** `--replicas`: the cluster's copies of each stream and store (undefined: as they are, 1 when new). */
  replicas?: number;
  store: StoreSpec;
  /** --store as given (`nats` or s3://...). */
  storeFlag: string;
  retentionMs: number;
}

/**
 * Reads the studio flags; S3 keys and endpoint come from the environment.
 * @throws ConfigError (or ValidationError) naming the flag, fit for a usage error.
 */
export function studioReceiverFlags(flags: StudioReceiverFlags, env: NodeJS.ProcessEnv): StudioReceiver {
  const { url, servers } = parseTeamUrls(flags.team);
  const replicas = flags.replicas === undefined ? undefined : parseReplicas(flags.replicas);
  const store: StoreSpec =
    flags.store !== undefined && flags.store !== 'nats'
      ? { kind: 's3', ...parseS3Url(flags.store), ...s3FromEnv(env) }
      : { kind: 'nats' };
  const retentionMs = flags.retention === undefined ? DEFAULT_RETENTION_MS : parseRetention(flags.retention);
  return {
    url,
    servers,
    serverList: teamServerList(servers),
    ...(replicas ? { replicas } : {}),
    store,
    storeFlag: flags.store ?? 'nats',
    retentionMs,
  };
}

/**
 * The team credentials for the studio's first server: TALLY_TEAM_* first, then the keychain entry stored for it.
 * No keychain here is fine for an open team server (null); a damaged entry or a half-set environment is not.
 */
export async function studioReceiverCredentials(
  studio: Pick<StudioReceiver, 'url'>,
  env: NodeJS.ProcessEnv,
  keychain: CredentialStore | null,
): Promise<TeamCredentials | null> {
  return resolveTeamCredentials(studio.url, env, keychain).catch((error: unknown) => {
    if (error instanceof ConfigError && !/damaged|TALLY_TEAM/.test(error.message)) return null;
    throw error;
  });
}

/** The publisher the receive service runs beside the pipeline for this studio. */
export function studioPublisherSetup(
  studio: StudioReceiver,
  opts: {
    credentials: TeamCredentials | null;
    /** The pipeline's state folder: the publisher's ledger goes there. */
    stateDir: string;
    env: NodeJS.ProcessEnv;
    log: Logger;
    /** The keychain as it is at each new try after refused credentials ("tally login --team" meanwhile fixes it). */
    keychain: () => CredentialStore | null;
  },
): PublisherSetup {
  const retryMs = opts.env.TALLY_TEAM_RETRY_MS;
  // Tests: how soon a receiver killed mid-download leaves its recordings to the others (default 10 min).
  const staleClaimMs = opts.env.TALLY_TEAM_STALE_CLAIM_MS;
  return {
    key: JSON.stringify([studio.servers.map((u) => u.href), studio.replicas, studio.storeFlag, studio.retentionMs]),
    options: {
      url: studio.url,
      servers: studio.servers,
      ...(studio.replicas ? { replicas: studio.replicas } : {}),
      credentials: opts.credentials,
      store: studio.store,
      retentionMs: studio.retentionMs,
      stateDir: opts.stateDir,
      log: opts.log,
      reloadCredentials: () => resolveTeamCredentials(studio.url, opts.env, opts.keychain()),
      ...(retryMs ? { retry: { baseDelayMs: Number(retryMs) } } : {}),
      ...(staleClaimMs ? { staleClaimMs: Number(staleClaimMs) } : {}),
    },
  };
}
