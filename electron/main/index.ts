/**
 * The Electron main process: one boot sequence in a fixed order (electron/fiddle's `onReady`). Every
 * feature is a service from this folder with its Electron objects passed in; this file only wires
 * them to the real Electron modules and to the core.
 *
 *   before ready: log file, crash handlers, single-instance lock, app id, sandbox for every renderer,
 *                 web-contents defaults
 *   on ready:     hide the dock, harden the session, app menu, create the core, register ALL IPC
 *                 handlers (before any window exists), tray, notifications, progress, start the core,
 *                 updates (packaged and not in demo mode).
 *   quitting:     the core is stopped (awaited, with a timeout) before the process exits.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  app,
  BrowserWindow,
  clipboard,
  crashReporter,
  dialog,
  ipcMain,
  Menu,
  nativeImage,
  Notification,
  screen,
  session,
  shell,
  Tray,
} from 'electron';
// CommonJS: its `autoUpdater` is a getter that builds the platform's updater (and needs Electron's app) on first use.
import electronUpdater from 'electron-updater';
import { EVENT_NAMES, shellLanguage, shellText, type Language } from '../contract.js';
import type { AppCore } from '../core/app/types.js';
import { createAppCore } from '../core/app/app-core.js';
import { KeyringSecretStore } from '../core/credentials.js';
import { crashDumpFolder, recordCrash } from '../core/crash-history.js';
import { logFolder, openLogFile, type FileLog } from '../core/log-file.js';
import { isLogLevel, sinkLogger, type Logger, type LogLevel } from '../core/logger.js';
import { secretsInEnv } from '../core/redact.js';
import { wallNow } from '../core/time.js';
import { installCrashHandlers } from './crash.js';
import { installGracefulQuit } from './graceful-quit.js';
import { createSenderCheck, EventPusher, registerIpc } from './ipc.js';
import type { AppPage } from './ipc.js';
import { describeError, redactSecrets } from './log.js';
import type { Log } from './log.js';
import { NotificationService } from './notifications.js';
import { createPlatformHooks } from './platform-hooks.js';
import { PopoverWindow } from './popover.js';
import { ProgressService } from './progress.js';
import { hardenSession, openExternalSafe } from './security.js';
import { SystemTrayService } from './tray.js';
import type { TrayIconState } from './tray.js';
import { UpdateService } from './updates.js';

const APP_ID = 'com.tally.app';

/**
 * The app's log file (<userData>/logs/app.N.log), opened in main() as soon as the data folder is known.
 * Lines logged before it is open wait for it, in order; the console gets every line at once.
 */
let logFile: Promise<FileLog | null> = Promise.resolve(null);
const scoped = new Map<string, FileLog>();

const logger =
  (scope: string): Log =>
  (line) => {
    // The same redaction as the log file, the environment's secrets included.
    console.error(`[${scope}] ${redactSecrets(line, secretsInEnv(process.env))}`);
    void logFile.then((file) => {
      if (!file) return;
      let log = scoped.get(scope);
      if (!log) scoped.set(scope, (log = file.scope(scope)));
      log.warn(line);
    });
  };
const log = logger('main');

/**
 * The event trail for the core (core/logger.ts levels and scopes): the log file only, at its level (the console
 * of a tray app is read by no one). Lines logged before the file is open wait for it, in order.
 */
const trail: Logger = sinkLogger((level, scope, line) => {
  void logFile.then((file) => {
    if (!file) return;
    let target = scoped.get(`trail:${scope ?? ''}`);
    if (!target) scoped.set(`trail:${scope ?? ''}`, (target = scope ? file.fileOnly.scope(scope) : file.fileOnly));
    target[level](line);
  });
});

/** `--debug` or `--log-level <level>` on the app's command line: the log's level whatever the setting says. */
function levelFromCommandLine(argv: readonly string[]): LogLevel | null {
  if (argv.includes('--debug')) return 'debug';
  const at = argv.findIndex((a) => a === '--log-level' || a.startsWith('--log-level='));
  if (at < 0) return null;
  const value = argv[at]?.includes('=') ? argv[at]?.split('=')[1] : argv[at + 1];
  return isLogLevel(value) ? value : null;
}
const commandLineLevel = levelFromCommandLine(process.argv);

/** The Language setting, for what the main process says itself (tray menu, dialogs, notifications). */
let languageSetting: Language = 'system';
const language = () => shellLanguage(languageSetting, app.getLocale());

/** The core once it exists: Copy diagnostics of the crash-loop dialog asks it for the report. */
let runningCore: AppCore | null = null;

/** A dev server is honoured only in an unpackaged run, and only on loopback. */
function devServerUrl(): string | null {
  const raw = process.env.TALLY_DEV_SERVER_URL;
  if (!raw || app.isPackaged) return null;
  try {
    const url = new URL(raw);
    if (url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return url.origin;
  } catch {
    // fall through
  }
  log('TALLY_DEV_SERVER_URL must be an http URL on loopback; loading the built page instead');
  return null;
}

function resourcePaths() {
  const root = app.getAppPath();
  const page: AppPage = {
    fileUrl: pathToFileURL(join(root, 'dist', 'renderer', 'index.html')).href,
    devServerUrl: devServerUrl(),
  };
  return {
    page,
    preload: join(root, 'dist', 'preload', 'index.cjs'),
    // Tray icons ship beside app.asar (extraResources) so the OS can read them; in development they
    // come straight from build/.
    trayIcons: app.isPackaged ? join(process.resourcesPath, 'tray') : join(root, 'build', 'tray'),
  };
}

function trayIconFile(state: TrayIconState): string {
  // macOS draws template images in the menu bar's own colour; a warning or an error keeps its colour to stand out.
  if (process.platform === 'darwin' && state !== 'warning' && state !== 'error') return 'trayTemplate.png';
  return `tray-${state}.png`;
}

/** Everything from app-ready on. */
async function onReady(): Promise<void> {
  const paths = resourcePaths();
  app.dock?.hide();
  hardenSession(session.defaultSession, { devServerUrl: paths.page.devServerUrl });
  // A tray app has no menu bar, but macOS routes Cmd+C/V/X/A through the application menu's Edit items.
  Menu.setApplicationMenu(
    process.platform === 'darwin' ? Menu.buildFromTemplate([{ role: 'appMenu' }, { role: 'editMenu' }]) : null,
  );

  const pusher = new EventPusher();
  const progress = new ProgressService({
    setProgressBar: (value, mode) => popover.window?.setProgressBar(value, { mode }),
    setBadgeCount: (count) => void app.setBadgeCount(count),
  });
  // electronegativity OPEN_EXTERNAL_JS_CHECK: shell.openExternal is reached only through openExternalSafe,
  // which opens nothing but https pages of EXTERNAL_SITES (security.ts; refusals tested in security.spec.ts).
  const openExternal = (url: string) =>
    void openExternalSafe(url, { openExternal: (u) => shell.openExternal(u), log: logger('external') }).catch(
      (error: unknown) => log(`could not open a link: ${describeError(error)}`),
    );

  let core: AppCore | null = null;
  const popover = new PopoverWindow({
    // electronegativity CONTEXT_ISOLATION_JS_CHECK, SANDBOX_JS_CHECK, AUXCLICK_JS_CHECK: the scanner cannot see
    // through `options`; they come from windowOptions() in popover.ts with contextIsolation and sandbox true and
    // nodeIntegration false (popover.spec.ts), and every new window, middle-click included, is denied by
    // hardenWebContents' setWindowOpenHandler (security.ts).
    createWindow: (options) => new BrowserWindow(options),
    preloadPath: paths.preload,
    page: paths.page,
    screen,
    openExternal,
    devTools: !app.isPackaged,
    onVisibilityChange: (visible) => core?.setVisible(visible),
    onWindowCreated: (win) => {
      pusher.attach(win.webContents);
      progress.invalidate();
    },
    onPageLoading: () => pusher.reset(),
    // A dead page was loaded again in a new renderer: the producer is told, in case they were typing.
    onRendererGone: ({ reason, reloaded }) => {
      trail.child('popover').warn(`the page's renderer stopped (${reason}); ${reloaded ? 'reloaded' : 'dropped'}`);
      if (!reloaded || !Notification.isSupported()) return;
      new Notification({
        title: shellText(language(), 'rendererReloadedTitle'),
        body: shellText(language(), { key: 'rendererReloadedBody', params: { reason } }),
      }).show();
    },
    log: logger('popover'),
  });

  app.on('second-instance', () => popover.show());

  const hooks = createPlatformHooks({
    showItemInFolder: (path) => shell.showItemInFolder(path),
    openPath: (path) => shell.openPath(path),
    showOpenDialog: (options) =>
      popover.whileHeldOpen(() => {
        const parent = popover.window;
        return parent ? dialog.showOpenDialog(parent, options) : dialog.showOpenDialog(options);
      }),
    writeText: (text) => clipboard.writeText(text),
    setLoginItemSettings: (settings) => app.setLoginItemSettings(settings),
    // Only a packaged app has a stable executable to autostart (the AppImage itself when run as one).
    linuxAutostart: app.isPackaged
      ? {
          dir: join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'autostart'),
          execPath: process.env.APPIMAGE || process.execPath,
        }
      : undefined,
  });

  const appCore: AppCore = await createAppCore({
    home: app.getPath('userData'),
    secrets: new KeyringSecretStore(),
    hooks,
    transport: 'ipc',
    demo: process.env.TALLY_DEMO === '1' || undefined,
    // Every warning the core handles (settings reset, a poll that failed, a tunnel that broke) lands in the log.
    log: logger('core'),
    trail,
  });
  core = appCore;
  runningCore = appCore;
  installGracefulQuit({ app, stop: () => appCore.stop(), onQuitting: () => popover.allowClose(), log: logger('quit') });

  // All handlers exist before the first window does, so no early request can miss its handler.
  registerIpc({
    ipcMain,
    handlers: appCore.handlers,
    isTrustedSender: createSenderCheck({ getWebContents: () => popover.window?.webContents ?? null, page: paths.page }),
    onReady: () => pusher.markReady(),
    log: logger('ipc'),
  });

  // The Language setting (module scope: the crash dialogs speak it too) picks the shell catalogue in
  // electron/shell-text.ts, the one the popover's locales include too.
  const tray = new SystemTrayService({
    createTray: (image) => new Tray(image),
    loadIcon: (state) => nativeImage.createFromPath(join(paths.trayIcons, trayIconFile(state))),
    buildMenu: (template) => Menu.buildFromTemplate(template),
    showMessageBox: (options) => dialog.showMessageBox(options),
    handlers: appCore.handlers,
    popover: {
      toggle: (bounds) => popover.toggle(bounds),
      show: () => popover.show(),
      showSection: (section) => popover.showSection(section),
    },
    openFolder: (folder) =>
      void shell.openPath(folder).then((problem) => problem && log(`could not open the recordings folder: ${problem}`)),
    quit: () => {
      trail.info('quitting (the tray menu’s Quit)');
      app.quit();
    },
    restartToUpdate: () => {
      trail.info('quitting to install an update');
      updates.restartToUpdate();
    },
    log: logger('tray'),
    language,
  });

  // Updates (updates.ts): only a packaged app has something to replace; the Update feed URL setting and demo
  // mode are read from the settings as they change.
  let updateFeed: string | null = null;
  let demoMode = true;
  const updates = new UpdateService({
    updater: app.isPackaged ? electronUpdater.autoUpdater : null,
    currentVersion: app.getVersion(),
    feedUrl: () => updateFeed,
    demo: () => demoMode,
    onReadyChange: (version) => tray.setUpdateReady(version),
    // The install runs as the app quits; an AppImage is started again from its (now replaced) file.
    restart: () => {
      app.relaunch(process.env.APPIMAGE ? { execPath: process.env.APPIMAGE } : undefined);
      app.quit();
    },
    log: logger('updates'),
  });

  const notifications = new NotificationService({
    createNotification: (options) => new Notification(options),
    isSupported: () => Notification.isSupported(),
    reveal: (path) => shell.showItemInFolder(path),
    showPopover: () => popover.show(),
    log: logger('notifications'),
    language,
  });

  for (const name of EVENT_NAMES) appCore.on(name, (payload) => pusher.send(name, payload));
  appCore.on('tray:snapshot', (snapshot) => {
    tray.setSnapshot(snapshot);
    progress.update(snapshot);
  });
  appCore.on('notify', (payload) => notifications.notify(payload));
  const followLogLevel = (level: LogLevel) =>
    void logFile.then((file) => {
      if (!file || commandLineLevel !== null || file.level === level) return;
      file.setLevel(level);
      file.fileOnly.info(`log level ${level} (the logLevel setting)`);
    });
  appCore.on('settings:changed', (settings) => {
    followLogLevel(settings.logLevel);
    notifications.setSettings(settings.notifications);
    updateFeed = settings.updateFeedUrl;
    demoMode = settings.demoMode;
    updates.settingsChanged();
    if (settings.language === languageSetting) return;
    languageSetting = settings.language;
    tray.languageChanged();
  });

  tray.setSnapshot(appCore.traySnapshot());
  try {
    const settings = await appCore.handlers['settings:get']();
    followLogLevel(settings.logLevel);
    notifications.setSettings(settings.notifications);
    languageSetting = settings.language;
    tray.languageChanged();
    updateFeed = settings.updateFeedUrl;
    demoMode = settings.demoMode;
    await appCore.start();
    updates.start();
  } catch (error) {
    // The tray stays up (to show the problem and to quit); the popover explains through app:error.
    log(`the core did not start: ${describeError(error)}`);
  }
}

function main(): void {
  // TALLY_HOME points the app and the CLI at the same state folder in scripts and tests. It must be set
  // before the single-instance lock, which lives in the userData folder.
  if (process.env.TALLY_HOME) app.setPath('userData', process.env.TALLY_HOME);
  if (!app.requestSingleInstanceLock()) {
    // Another Tally is running; it shows its popover on 'second-instance'.
    app.quit();
    return;
  }
  const home = app.getPath('userData');
  // Secrets from the environment are blanked wherever they appear (the patterns catch the rest).
  logFile = openLogFile({
    home,
    name: 'app',
    secrets: () => secretsInEnv(process.env),
    level: commandLineLevel ?? 'info',
  }).catch((error: unknown) => {
    console.error(`[main] the log file could not be opened: ${describeError(error)}`);
    return null;
  });
  log(`Tally ${app.getVersion()} starting (Electron ${process.versions.electron ?? '?'}, ${process.platform})`);
  // Native crashes (main, renderers, the GPU and utility processes) leave a minidump in the data folder, kept on
  // this computer and never uploaded; `tally doctor` and Copy diagnostics list them (core/crash-history.ts).
  app.setPath('crashDumps', crashDumpFolder(home));
  crashReporter.start({ uploadToServer: false, compress: true });
  installCrashHandlers({
    process,
    log: logger('crash'),
    show: (title, message) => dialog.showErrorBox(title, message),
    // Electron starts the new instance once this one has quit (the core stopped the graceful way).
    restart: () => {
      trail.info('quitting to start again (uncaught exception)');
      app.relaunch();
      app.quit();
    },
    logFolder: logFolder(home),
    // The crash-loop guard: the third crash within a minute does not relaunch (see crash.ts).
    recordCrash: () => recordCrash(home, wallNow()),
    loopText: (count) => ({
      title: shellText(language(), 'crashLoopTitle'),
      message: shellText(language(), { key: 'crashLoopMessage', params: { count } }),
      detail: shellText(language(), { key: 'crashLoopDetail', params: { folder: logFolder(home) } }),
      copy: shellText(language(), 'crashLoopCopy'),
      quit: shellText(language(), 'trayQuit'),
    }),
    askInLoop: async (text) =>
      (
        await dialog.showMessageBox({
          type: 'error',
          title: text.title,
          message: text.message,
          detail: text.detail,
          buttons: [text.copy, text.quit],
          defaultId: 0,
          cancelId: 1,
          noLink: true,
        })
      ).response,
    copyDiagnostics: async () => {
      const report = runningCore
        ? (await runningCore.handlers['app:diagnostics']()).text
        : `Tally ${app.getVersion()} stopped before its core started. The log is in ${logFolder(home)}.`;
      clipboard.writeText(report);
    },
    quit: () => {
      trail.info('quitting (crash loop: not starting again)');
      app.quit();
    },
  });
  // Electron's other processes: a GPU or utility process that dies is restarted by Electron; it is logged so a
  // bug report shows it. (The popover's own renderer is reloaded by popover.ts.)
  app.on('child-process-gone', (_event, details) => {
    const line = `${details.type} process gone (${details.reason}, exit code ${details.exitCode})${details.name ? `: ${details.name}` : ''}`;
    if (details.reason === 'clean-exit') trail.child('process').info(line);
    else trail.child('process').error(line);
  });
  app.on('render-process-gone', (_event, _contents, details) =>
    trail.child('process').error(`a renderer process gone (${details.reason}, exit code ${details.exitCode})`),
  );
  app.setAppUserModelId(APP_ID);
  app.enableSandbox();
  // Defaults for any web contents, including ones the popover service does not know about.
  app.on('web-contents-created', (_event, contents) => {
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
    contents.on('will-attach-webview', (event) => event.preventDefault());
  });
  // A tray app keeps running with no window open.
  app.on('window-all-closed', () => {});
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      trail.info(`quitting (${signal})`);
      app.quit();
    });
  }
  // The last line of every run says it ended, after the core stopped (graceful-quit.ts holds the quit till then).
  app.on('will-quit', () => trail.info('Tally stopped'));

  app
    .whenReady()
    .then(onReady)
    .catch((error: unknown) => {
      log(`startup failed: ${describeError(error)}`);
      // After the line is in the file (the log's callbacks run in order), so the exit cannot lose it.
      void logFile.then(() => {
        dialog.showErrorBox(
          'Tally could not start',
          `Something went wrong while starting Tally. The details are in the log (${logFolder(app.getPath('userData'))}).`,
        );
        app.exit(1);
      });
    });
}

main();
