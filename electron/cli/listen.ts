/**
 * `tally listen`: the recording pipeline headless. Receives recording webhooks (through a tunnel when
 * asked), journals them durably, downloads and verifies every recording into the folder, and keeps doing
 * so until Ctrl+C / SIGTERM, when it stops gracefully (journal flushed, part files kept for resume).
 */
import { ConfigError } from '../core/errors.js';
import { DEMO_TIME_FACTOR, demoPipeline, demoRecordingsDir, startDemoSandbox } from '../core/app/demo.js';
import { appDataDir, expandFolderFlag } from '../core/paths.js';
import { receiveOptions, tunnelFlags, type TunnelFlags } from '../core/receive/receive-options.js';
import { ReceiveService } from '../core/receive/receive-service.js';
import type { ReceiveReady } from '../core/receive/receive-events.js';
import type { Command, CommandIo } from './command.js';
import { openCommandLog } from './command-log.js';
import { UsageError } from './command.js';
import { CONNECTION_HELP, CONNECTION_OPTIONS, connectionFlags, parseCommandArgs } from './arguments.js';
import { createApi } from './service-client.js';
import { endpointsFor, loadSettings } from './settings.js';
import { isTty } from './prompts.js';
import { openCredentialResolver } from './keychain.js';
import { coalescingWriter, createListenPrinter, printReceiveEvents } from './listen-output.js';
import { ensureWritableFolder } from '../core/folder-check.js';

const help = `Usage: tally listen [--folder DIR] [options]

Receive the service's recording webhooks and download every recording, verified, into DIR before the
service deletes it (6 hours after the broadcast ends). Runs until Ctrl+C; pending downloads resume on the
next start.

Options:
  --folder <dir>           Recordings folder (default: the recordingsFolder setting); ~ is your home folder
  --port <n>               Local receiver port (default: the receiverPort setting, 8787; 0 picks a free one)
  --host <addr>            Local receiver address (default 127.0.0.1)
  --tunnel <t>             none | ngrok | localtunnel | <your public https URL> (default: the tunnel setting)
  --ngrok-domain <d>       Static ngrok domain, so the URL survives restarts (authtoken from the keychain,
                           stored with "tally login --ngrok")
  --localtunnel-host <url> Self-hosted localtunnel server
  --register               Register the public webhook URL with the service (admin API) whenever it changes
  --sandbox                Try it without an account: start the built-in sandbox service, keep broadcasts
                           going on it and send its recording webhooks to this receiver (demo state and, by
                           default, the demo recordings folder, apart from the real ones). Each run starts
                           afresh: the demo folder is emptied, and in a --folder of yours only the downloads
                           the last run left unfinished are removed
  --time-factor <f>        With --sandbox: how much faster the sandbox's time runs (default 10)
  --concurrency <n>        Downloads at once (default 3)
  --upload-origin <origin> Allow a web app origin to upload client recordings (repeatable)
  --team <url>             Studio mode: share every saved recording with the team's NATS server
                           (nats://HOST:PORT or tls://HOST:PORT; a cluster's servers separated by
                           commas); members mirror them with "tally follow"
  --store <where>          With --team: where the bytes go: nats (the team server's object store, default)
                           or s3://BUCKET/PREFIX (keys: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY,
                           endpoint: TALLY_S3_ENDPOINT for S3-compatible servers)
  --retention <d>          With --team: how long the team keeps recordings (default 7d; e.g. 36h, 14d)
  --replicas <n>           With --team: servers of a cluster that keep each recording (1, 3 or 5;
                           3 on a three-node cluster, so any one node can be down)
  --ndjson                 One JSON object per line: ready, health, received, progress, saved, rejected,
                           failed, expired, uploaded, tunnel, gaps, channel, recording-missing; with --team
                           also team, connection, published. Past 20 a kind in 10 s, repeated rejected, duplicate
                           and failed lines are counted in one rejected-summary, duplicate-summary or
                           failed-summary line
  --log-level <level>      How much <data>/logs/listen.N.log holds: debug, info, warn or error (default:
                           the logLevel setting, info: every webhook, download attempt, save, health change)
  --debug                  The same as --log-level debug
  -h, --help               Show this help

${CONNECTION_HELP}
Health: a "health" line whenever something that can cost a recording changes (the port, the public URL,
registration, downloads, disk space), with --ndjson naming the first recordings that need attention
(problemRecordings: channel, recording, reason, next attempt; moreProblems counts the rest); "tally status"
asks a running listen from another terminal and names them too. With
--tunnel <your URL> or none the port never moves: a port held by another program is an error that names it,
and the port is taken as soon as it is free. TALLY_CHECK_INTERVAL_MS: how often the public URL is proven
(default 60000).
Allowed download origins: TALLY_DOWNLOAD_ORIGINS (comma list, wildcard subdomains allowed), default
https://s3.amazonaws.com. Credentials are optional here: without them (or when the hosts changed since
the secret was entered), --register and the report of recordings missed while Tally was not running are
unavailable.

Examples:
  tally listen --folder ~/Videos/Tally --tunnel ngrok --ngrok-domain my-name.ngrok.app --register
  tally listen --folder ./recordings --tunnel https://hooks.example.com --ndjson | jq .
  tally listen --sandbox --folder ./try-it       # no account needed: recordings arrive within a minute
  tally listen --folder /srv/recordings --tunnel ngrok --register --team nats://127.0.0.1:4222

Team credentials for --team: TALLY_TEAM_USER + TALLY_TEAM_PASSWORD, or TALLY_TEAM_TOKEN, or the keychain
entry stored by "tally login --team URL". While the team server is unreachable, recordings are still
received and saved here, and shared once it answers.
`;

const command: Command = {
  help,
  async run(argv: string[], io: CommandIo): Promise<number> {
    const { values } = parseCommandArgs(argv, {
      ...CONNECTION_OPTIONS,
      folder: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      tunnel: { type: 'string' },
      'ngrok-domain': { type: 'string' },
      'localtunnel-host': { type: 'string' },
      register: { type: 'boolean' },
      concurrency: { type: 'string' },
      'upload-origin': { type: 'string', multiple: true },
      ndjson: { type: 'boolean' },
      sandbox: { type: 'boolean' },
      'time-factor': { type: 'string' },
      team: { type: 'string' },
      store: { type: 'string' },
      retention: { type: 'string' },
      replicas: { type: 'string' },
    });
    // Studio mode's modules (the NATS client, the AWS SDK: about 10 MB of RSS) are loaded only with its flags.
    const studioFlags =
      values.team !== undefined ||
      values.store !== undefined ||
      values.retention !== undefined ||
      values.replicas !== undefined;
    const studioMode = studioFlags ? await import('./listen-studio.js') : null;
    const studio = studioMode ? await studioMode.studioSetup(values, io) : null;
    const flags = connectionFlags(values);
    const { settings, store } = loadSettings(io);

    const home = appDataDir(io.env);
    const sandboxMode = values.sandbox === true;
    if (sandboxMode && values.register) {
      throw new UsageError('--register talks to the real service; --sandbox has none.');
    }
    if (values['time-factor'] !== undefined && !sandboxMode) throw new UsageError('--time-factor needs --sandbox.');
    const timeFactor = values['time-factor'] === undefined ? DEMO_TIME_FACTOR : Number(values['time-factor']);
    if (!Number.isFinite(timeFactor) || timeFactor < 1 || timeFactor > 100_000) {
      throw new UsageError('--time-factor must be a number from 1 to 100000.');
    }
    // The sandbox run picks a free port unless told otherwise: the tray app may hold 8787.
    const port = values.port === undefined ? (sandboxMode ? 0 : undefined) : Number(values.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
      throw new UsageError('--port must be 0..65535.');
    }
    const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
    if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 10)) {
      throw new UsageError('--concurrency must be 1..10.');
    }

    let tunnel: TunnelFlags;
    try {
      tunnel = tunnelFlags({
        ...(values.tunnel === undefined ? {} : { tunnel: values.tunnel }),
        ...(values['ngrok-domain'] === undefined ? {} : { ngrokDomain: values['ngrok-domain'] }),
        ...(values['localtunnel-host'] === undefined ? {} : { localtunnelHost: values['localtunnel-host'] }),
      });
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    if (sandboxMode && values.tunnel === undefined) tunnel = { ...tunnel, provider: 'none' };
    const provider = tunnel.provider ?? settings.tunnel.provider;

    // The ngrok authtoken first: without it nothing starts, whatever the service's credentials say.
    const resolver = openCredentialResolver(io);
    const ngrokAuthtoken = provider === 'ngrok' ? await resolver.ngrokAuthtoken() : null;
    if (provider === 'ngrok' && !ngrokAuthtoken) {
      throw new ConfigError(
        'ngrok needs an authtoken: run "tally login --ngrok" (the OS keychain, or without one a file only you can read), or set TALLY_NGROK_AUTHTOKEN.',
      );
    }

    // Credentials are needed only for registration and the gap report, and only for the hosts they were
    // entered for: when they are withheld, recordings are still received and the reason is printed.
    // The sandbox run uses neither, so it never reads the keychain.
    const endpoints = endpointsFor(io, flags, settings);
    const found = sandboxMode ? null : await resolver.lookup(endpoints, flags.serviceId);
    if (found && found.kind !== 'ready' && values.register) throw new ConfigError(found.message);
    const credentials = found?.kind === 'ready' ? found.credentials : null;
    const credentialsNote =
      !found || found.kind === 'ready'
        ? null
        : found.kind === 'missing' && !found.configured
          ? 'No credentials: registration and the missed-recordings report are off.'
          : `${found.message} Until then, registration and the missed-recordings report are off.`;
    const api = credentials ? createApi(io, endpoints, credentials) : null;

    const log = await openCommandLog(io, 'listen', settings.logLevel);
    // Started before the pipeline so its download host can be allowed; stopped after it (see finally).
    // Its folder is noted, so the next sandbox run removes the parts this one leaves unfinished there.
    const demoFolder = values.folder === undefined ? demoRecordingsDir(home) : expandFolderFlag(values.folder);
    const sandbox = sandboxMode ? await startDemoSandbox(home, { timeFactor }, demoFolder) : null;
    if (sandbox) {
      log.trail.info(`sandbox service at ${sandbox.apiUrl} (time ${timeFactor}x faster)`);
      const { traceSandbox } = await import('../core/sandbox/sandbox-trail.js');
      traceSandbox(sandbox, log.trail.child('sandbox'));
    }
    const folderFlag =
      values.folder === undefined ? (sandbox ? demoRecordingsDir(home) : undefined) : expandFolderFlag(values.folder);
    const uploadOrigins = values['upload-origin'] ?? [];
    const { options, studio: studioSpec } = receiveOptions({
      settings,
      currentSettings: () => store.get(),
      env: io.env,
      home,
      // The sandbox's jobs point at a server that is gone after this run: they never enter the real inbox.
      demo: sandbox ? demoPipeline(home, sandbox) : null,
      flags: {
        ...(folderFlag === undefined ? {} : { folder: folderFlag }),
        ...(values.host === undefined ? {} : { host: values.host }),
        ...(port === undefined ? {} : { port }),
        ...(concurrency === undefined ? {} : { concurrency }),
        ...(values.register === true ? { register: true } : {}),
        tunnel,
        uploadOrigins,
        ...(studio
          ? {
              studio: {
                servers: studio.serverList,
                store: studio.storeFlag,
                retentionMs: studio.retentionMs,
                ...(studio.replicas ? { replicas: studio.replicas } : {}),
              },
            }
          : {}),
      },
      credentials,
      endpoints,
      api,
      ngrokAuthtoken,
      log,
    });
    let folder: string;
    try {
      // Checked before anything starts: a folder that cannot hold recordings is one clear line, not a wedge.
      folder = await ensureWritableFolder(options.folder, {
        source:
          values.folder === undefined
            ? 'the recordings folder (the recordingsFolder setting)'
            : 'the recordings folder (--folder)',
      });
    } catch (error) {
      await sandbox?.close();
      throw error;
    }

    // Each turn's lines in one write, the studio's lines (`--team`) in the same writer and order.
    const out = coalescingWriter(io.stdout);
    const printer = createListenPrinter({
      out,
      ndjson: values.ndjson === true,
      tty: isTty(io.stdout),
      folder,
      sandbox: sandbox !== null,
    });
    // The same receive service as the tray app and `tally serve`: port policy, health, studio publisher and
    // `tally status`. Listen only prints its one event stream.
    const service = new ReceiveService({
      face: 'listen',
      home,
      log: (line) => io.stderr.write(`tally listen: ${line}\n`),
      trail: log.trail.child('receive'),
      facts: { demo: sandbox !== null },
    });
    printReceiveEvents(service, printer);
    if (studioMode && studio && studioSpec) {
      studioMode.printPublisher(service, io, values.ndjson === true, out);
      await service.publish(studioMode.publisherSetup(studio, options.stateDir, io));
    }
    let ready: ReceiveReady | null;
    try {
      await service.start();
      await service.open({ ...options, folder }, { paused: false, demo: sandbox !== null });
      ready = service.ready();
    } catch (error) {
      await service.stop();
      await sandbox?.close();
      printer.close();
      out.flush();
      throw error;
    }
    try {
      if (!ready) throw new Error('The receiver did not open.');
      // Loopback is enough for the sandbox: it runs on this machine.
      if (ready.localUrl) {
        sandbox?.control.setWebhookUrl(ready.localUrl);
        sandbox?.control.setChannelWebhookUrl(ready.localUrl);
      }
      const notes = [
        credentialsNote,
        values.register && !ready.publicUrl && ready.localUrl
          ? 'Nothing to register: there is no public URL, and the service cannot reach a local one. Add --tunnel ngrok, --tunnel localtunnel or --tunnel <your https URL>.'
          : null,
        sandbox
          ? `Sandbox: broadcasts start and end on their own (time ${timeFactor}x faster); their recordings are sent here.`
          : null,
      ].filter((n) => n !== null);
      printer.ready({
        ...ready,
        note: notes.length > 0 ? notes.join(' ') : null,
        localOnly: sandbox !== null,
        ...(sandbox ? { sandboxUrl: sandbox.apiUrl } : {}),
      });
      if (!io.signal.aborted)
        await new Promise<void>((done) => io.signal.addEventListener('abort', () => done(), { once: true }));
      printer.stopping();
    } finally {
      await service.stop();
      await sandbox?.close();
      printer.close();
      out.flush();
    }
    return 0;
  },
};

export default command;
