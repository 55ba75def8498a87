/**
 * `tally listen --team …`: the flags of studio mode, checked before anything starts, the publisher the receive
 * service runs to share every saved recording with the team, and its lines in listen's output.
 */
import { lineLogger } from '../core/logger.js';
import type { PublisherSetup, ReceiveService } from '../core/receive/receive-service.js';
import {
  studioPublisherSetup,
  studioReceiverCredentials,
  studioReceiverFlags,
  type StudioReceiver,
} from '../core/receive/publisher-setup.js';
import type { CommandIo } from './command.js';
import { UsageError } from './command.js';
import { openCredentialStore } from './keychain.js';
import { createStudioPrinter } from './studio-output.js';

export interface StudioSetup extends StudioReceiver {
  credentials: Awaited<ReturnType<typeof studioReceiverCredentials>>;
}

/** null without --team; a UsageError for --store / --retention without it or with a bad value. */
export async function studioSetup(
  values: { team?: string; store?: string; retention?: string; replicas?: string },
  io: Pick<CommandIo, 'env' | 'secrets'>,
): Promise<StudioSetup | null> {
  if (values.team === undefined) {
    if (values.store !== undefined) throw new UsageError('--store needs --team.');
    if (values.retention !== undefined) throw new UsageError('--retention needs --team.');
    if (values.replicas !== undefined) throw new UsageError('--replicas needs --team.');
    return null;
  }
  let studio: StudioReceiver;
  try {
    studio = studioReceiverFlags(
      {
        team: values.team,
        ...(values.store === undefined ? {} : { store: values.store }),
        ...(values.retention === undefined ? {} : { retention: values.retention }),
        ...(values.replicas === undefined ? {} : { replicas: values.replicas }),
      },
      io.env,
    );
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const credentials = await studioReceiverCredentials(studio, io.env, openCredentialStore(io));
  return { ...studio, credentials };
}

/** The publisher the receive service runs beside the pipeline (`--team`), with listen's log lines. */
export function publisherSetup(setup: StudioSetup, stateDir: string, io: CommandIo): PublisherSetup {
  return studioPublisherSetup(setup, {
    credentials: setup.credentials,
    stateDir,
    env: io.env,
    log: lineLogger((line) => io.stderr.write(`tally listen: ${line}\n`)),
    keychain: () => keychainOrNull(io),
  });
}

/**
 * Prints what the publisher does (the receive service's `studio-*` events), in listen's output (human lines or
 * NDJSON), through `out`: listen's own writer, which gathers each turn's lines into one write (a line per
 * recording shared, written on its own, was a system call each).
 */
export function printPublisher(
  service: ReceiveService,
  io: CommandIo,
  ndjson: boolean,
  out: { write(text: string): unknown } = io.stdout,
): void {
  const printer = createStudioPrinter({ out, err: io.stderr, ndjson, prefix: 'tally listen' });
  service.on('studio-connected', (info) => printer.connected(info.url));
  service.on('studio-waiting', (info) => printer.waiting(info));
  service.on('studio-connection', (state) => printer.connection(state));
  service.on('studio-refused', (info) => printer.refused(info));
  service.on('studio-published', (e) => printer.published(e));
  service.on('studio-warning', (w) => printer.warning(w));
}

function keychainOrNull(io: Pick<CommandIo, 'secrets'>) {
  try {
    return openCredentialStore(io);
  } catch {
    return null;
  }
}
