/**
 * Where the service lives. Defaults are the documented hosts; each can be overridden by a CLI flag,
 * an environment variable or a setting (in that order of precedence).
 */
export interface Endpoints {
  /** Signalling host: `/lambda/broadcast-channel-list`, `/lambda/channel-force-termination`. */
  baseUrl: string;
  /** Console API host: `/v1/search`. */
  consoleApiUrl: string;
  /** Admin API: `/api/recordhook/<serviceId>`, `/api/record/<serviceId>/<0|1>`. */
  adminUrl: string;
}

export const DEFAULT_ENDPOINTS: Readonly<Endpoints> = Object.freeze({
  baseUrl: 'https://signal.remotemonster.com',
  consoleApiUrl: 'https://consoleapi.remotemonster.com',
  adminUrl: 'https://signal.remotemonster.com:3002',
});

/** Origins recordings may be downloaded from unless `TALLY_DOWNLOAD_ORIGINS` says otherwise. */
export const DEFAULT_DOWNLOAD_ORIGINS: readonly string[] = Object.freeze(['https://s3.amazonaws.com']);

export const ENDPOINT_ENV: Readonly<Record<keyof Endpoints, string>> = Object.freeze({
  baseUrl: 'TALLY_BASE_URL',
  consoleApiUrl: 'TALLY_CONSOLE_API_URL',
  adminUrl: 'TALLY_ADMIN_URL',
});

/** Flag > env > settings > documented default. Trailing slashes are dropped so paths join cleanly. */
export function resolveEndpoints(
  sources: { flags?: Partial<Endpoints>; env?: NodeJS.ProcessEnv; settings?: Partial<Endpoints> } = {},
): Endpoints {
  const env = sources.env ?? process.env;
  const pick = (key: keyof Endpoints): string => {
    const value = sources.flags?.[key] || env[ENDPOINT_ENV[key]] || sources.settings?.[key] || DEFAULT_ENDPOINTS[key];
    return value.replace(/\/+$/, '');
  };
  return { baseUrl: pick('baseUrl'), consoleApiUrl: pick('consoleApiUrl'), adminUrl: pick('adminUrl') };
}
