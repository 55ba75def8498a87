/**
 * `tally listen`: the recording pipeline headless. Receives recording webhooks (through a tunnel when
 * asked), journals them durably, downloads and verifies every recording into the folder, and keeps doing
 * so until Ctrl-C / SIGTERM, when it stops gracefully (journal flushed, part files kept for resume).
 */
import { resolve } from 'node:path';
import { DEMO_TIME_FACTOR, demoRecordingsDir, demoStateDir, startDemoSandbox } from '../core/app/demo.js';
import { ConfigError } from '../core/errors.js';
import type { Credentials } from '../core/model.js';
import { DownloadOriginPolicy } from '../core/net/url-policy.js';
import { appDataDir } from '../core/paths.js';
import { RecordingPipeline } from '../core/recordings/pipeline.js';
import { parseTunnelFlag, type TunnelSettingsInput } from '../core/tunnels/index.js';
import type { Command, CommandIo } from './command.js';
import { UsageError } from './command.js';
import {
  CONNECTION_HELP,
  CONNECTION_OPTIONS,
  connectionFlags,
  createApi,
  endpointsFor,
  isTty,
  loadSettings,
  openCredentialStore,
  parseCommandArgs,
  resolveCredentials,
} from './context.js';
import { createListenPrinter } from './listen-output.js';

const help = `Usage: tally listen [--folder DIR] [options]

Receive the service's recording webhooks and download every recording, verified, into DIR before the
service deletes it (6 hours after the broadcast ends). Runs until Ctrl-C; pending downloads resume on the
next start.

Options:
  --folder <dir>           Recordings folder (default: the recordingsFolder setting)
  --port <n>               Local receiver port (default: the receiverPort setting, 8787; 0 picks a free one)
  --host <addr>            Local receiver address (default 127.0.0.1)
  --tunnel <t>             none | ngrok | localtunnel | <your public https URL> (default: the tunnel setting)
  --ngrok-domain <d>       Static ngrok domain, so the URL survives restarts (authtoken from the keychain
                           entry "ngrok" or NGROK_AUTHTOKEN)
  --localtunnel-host <url> Self-hosted localtunnel server
  --register               Register the public webhook URL with the service (admin API) whenever it changes
  --sandbox                Try it without an account: start the built-in sandbox service, keep broadcasts
                           going on it and send its recording webhooks to this receiver (demo state and, by
                           default, the demo recordings folder, apart from the real ones)
  --time-factor <f>        With --sandbox: how much faster the sandbox's time runs (default 10)
  --concurrency <n>        Downloads at once (default 3)
  --upload-origin <origin> Allow a web app origin to upload client recordings (repeatable)
  --ndjson                 One JSON object per line: ready, received, progress, saved, rejected, failed,
                           expired, uploaded, tunnel, gaps
  -h, --help               Show this help

${CONNECTION_HELP}
Allowed download origins: TALLY_DOWNLOAD_ORIGINS (comma list, wildcard subdomains allowed), default
https://s3.amazonaws.com. Credentials are optional here: without them, --register and the report of
recordings missed while Tally was not running are unavailable.

Examples:
  tally listen --folder ~/Videos/Tally --tunnel ngrok --ngrok-domain my-name.ngrok.app --register
  tally listen --folder ./recordings --tunnel https://hooks.example.com --ndjson | jq .
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
      sandbox: { type: 'boolean' },
      'time-factor': { type: 'string' },
      concurrency: { type: 'string' },
      'upload-origin': { type: 'string', multiple: true },
      ndjson: { type: 'boolean' },
    });
    const flags = connectionFlags(values);
    const { settings } = loadSettings(io);
    const home = appDataDir(io.env);

    const sandboxMode = values.sandbox === true;
    if (sandboxMode && values.register)
      throw new UsageError('--register talks to the real service; --sandbox has none.');
    if (values['time-factor'] !== undefined && !sandboxMode) throw new UsageError('--time-factor needs --sandbox.');
    const timeFactor = values['time-factor'] === undefined ? DEMO_TIME_FACTOR : Number(values['time-factor']);
    if (!Number.isFinite(timeFactor) || timeFactor < 1 || timeFactor > 100_000) {
      throw new UsageError('--time-factor must be a number from 1 to 100000.');
    }
    // The sandbox run picks a free port unless told otherwise: the tray app may hold 8787.
    const port = values.port === undefined ? (sandboxMode ? 0 : settings.receiverPort) : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError('--port must be 0..65535.');
    const concurrency = values.concurrency === undefined ? settings.concurrency : Number(values.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 10) {
      throw new UsageError('--concurrency must be 1..10.');
    }
    const folder = resolve(values.folder ?? (sandboxMode ? demoRecordingsDir(home) : settings.recordingsFolder));

    let tunnel: TunnelSettingsInput = {
      provider: settings.tunnel.provider,
      publicUrl: settings.tunnel.publicUrl ?? null,
      ngrokDomain: values['ngrok-domain'] ?? settings.tunnel.ngrokDomain ?? null,
      localtunnelHost: values['localtunnel-host'] ?? settings.tunnel.localtunnelHost ?? null,
    };
    if (values.tunnel !== undefined) {
      let parsed;
      try {
        parsed = parseTunnelFlag(values.tunnel);
      } catch (error) {
        throw new UsageError(error instanceof Error ? error.message : String(error));
      }
      tunnel = { ...tunnel, ...parsed };
    }

    if (sandboxMode && values.tunnel === undefined) tunnel = { ...tunnel, provider: 'none' };
    // Started before the pipeline so its download host can be allowed; stopped after it (see finally).
    const sandbox = sandboxMode ? await startDemoSandbox(home, { timeFactor }) : null;
    const policy = sandbox
      ? new DownloadOriginPolicy([sandbox.downloadOrigin])
      : DownloadOriginPolicy.fromEnv(io.env, settings.downloadOrigins);

    // Credentials are needed only for registration and the gap report; the sandbox run uses neither.
    let credentials: Credentials | null = null;
    let credentialsProblem: string | null = null;
    if (!sandbox) {
      try {
        credentials = await resolveCredentials(io, flags);
      } catch (error) {
        if (values.register) throw error;
        credentialsProblem = error instanceof Error ? error.message : String(error);
      }
    }
    const api = credentials ? createApi(io, endpointsFor(io, flags, settings), credentials) : null;

    let ngrokAuthtoken: string | null = null;
    if (tunnel.provider === 'ngrok') {
      ngrokAuthtoken = io.env.NGROK_AUTHTOKEN?.trim() || null;
      if (!ngrokAuthtoken) {
        ngrokAuthtoken = await openCredentialStore().getToken('ngrok');
      }
      if (!ngrokAuthtoken) {
        throw new ConfigError('ngrok needs an authtoken: set NGROK_AUTHTOKEN or store it with "tally login --ngrok".');
      }
    }

    const uploadOrigins = [...settings.uploadOrigins, ...(values['upload-origin'] ?? [])];
    let pipeline: RecordingPipeline;
    try {
      pipeline = await RecordingPipeline.open({
        // The sandbox's jobs point at a server that is gone after this run: they never enter the real inbox.
        stateDir: sandbox ? demoStateDir(home) : home,
        folder,
        policy,
        host: values.host ?? settings.receiverHost,
        port,
        tunnel,
        ngrokAuthtoken,
        register: values.register === true ? true : settings.autoRegisterWebhook && api !== null,
        api,
        projectScope: credentials?.serviceId ?? null,
        concurrency,
        fileNameTemplate: settings.fileNameTemplate,
        uploads: {
          subfolder: settings.clientUploadsSubfolder,
          maxBytes: settings.uploadMaxBytes,
          allowedOrigins: () => uploadOrigins,
        },
      });
    } catch (error) {
      await sandbox?.close();
      throw error;
    }

    const printer = createListenPrinter({
      out: io.stdout,
      ndjson: values.ndjson === true,
      tty: isTty(io.stdout),
      folder,
    });
    pipeline.on('received', (job, warnings) => printer.received(job, warnings));
    pipeline.on('duplicate', (job) => printer.duplicate(job));
    pipeline.on('rejected', (r) => printer.rejected(r));
    pipeline.on('progress', (p) => printer.progress(p));
    pipeline.on('saved', (e) => printer.saved(e));
    pipeline.on('failed', (e) => printer.failed(e));
    pipeline.on('expired', (e) => printer.expired(e));
    pipeline.on('uploaded', (e) => printer.uploaded(e));
    pipeline.on('tunnel', (s) => printer.tunnel(s));
    pipeline.on('registered', (r) => printer.registered(r.url));
    pipeline.on('registration-failed', (r) => printer.registrationFailed(r.url, r.message));
    pipeline.on('gaps', (g) => printer.gaps(g));

    try {
      const ready = await pipeline.start();
      // Loopback is enough for the sandbox: it runs on this machine.
      sandbox?.control.setWebhookUrl(ready.localUrl);
      const notes = [
        credentialsProblem ? 'No credentials: registration and the missed-recordings report are off.' : null,
        values.register && !ready.publicUrl
          ? 'Nothing to register: there is no public URL, and the service cannot reach a local one. Add --tunnel ngrok, --tunnel localtunnel or --tunnel <your https URL>.'
          : null,
        sandbox
          ? `Sandbox: broadcasts start and end on their own (time ${timeFactor}x faster); their recordings are sent here.`
          : null,
      ].filter((n) => n !== null);
      printer.ready({ ...ready, uploadOrigins, note: notes.length > 0 ? notes.join(' ') : null });
      if (!io.signal.aborted)
        await new Promise<void>((done) => io.signal.addEventListener('abort', () => done(), { once: true }));
      printer.stopping();
    } finally {
      await pipeline.stop();
      await sandbox?.close();
      printer.close();
    }
    return 0;
  },
};

export default command;
