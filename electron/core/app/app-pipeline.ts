/**
 * What the app core builds from settings + credentials on every reconcile: the service client (or the demo
 * sandbox's) and the pipeline options, through the same pipelineOptions() that `tally listen` uses.
 */
import { ChannelApi } from '../api-client.js';
import type { Endpoints } from '../endpoints.js';
import { lineLogger } from '../logger.js';
import type { Credentials } from '../model.js';
import { pipelineOptions, type PipelineStudio } from '../pipeline/options.js';
import type { PipelineOptions } from '../pipeline/pipeline.js';
import type { Settings } from '../settings.js';
import { demoPipeline, type DemoSandbox } from './demo.js';

/** The client for the demo sandbox, the configured service, or none without credentials. */
export function buildAppApi(
  sandbox: DemoSandbox | null,
  endpoints: Endpoints,
  credentials: Credentials | null,
  version: string,
): ChannelApi | null {
  const userAgent = `Tally/${version}`;
  if (sandbox)
    return new ChannelApi({ endpoints: sandbox.endpoints, credentials: sandbox.credentials, retries: 1, userAgent });
  if (!credentials) return null;
  return new ChannelApi({ endpoints, credentials, userAgent });
}

export interface AppPipelineInputs {
  settings: Settings;
  currentSettings: () => Settings;
  env: NodeJS.ProcessEnv;
  home: string;
  log: (line: string) => void;
  /** Host-bound credentials of the real service (ignored in demo mode). */
  credentials: Credentials | null;
  endpoints: Endpoints;
  /** The client in use, asked at call time (it changes with credentials); null when there is none. */
  api: (() => ChannelApi) | null;
  ngrokAuthtoken: string | null;
  /** The demo sandbox while it stands in for the service. */
  sandbox: DemoSandbox | null;
  /** Tests: pipeline options such as retryBaseMs or ngrokSdk. */
  overrides?: Partial<PipelineOptions>;
}

/** The app's pipeline options and rebuild key (see pipelineOptions). */
export function appPipelineSpec(inputs: AppPipelineInputs): {
  spec: PipelineOptions;
  key: string;
  studio: PipelineStudio | null;
} {
  const { sandbox, api, home } = inputs;
  const { options, key, studio } = pipelineOptions({
    settings: inputs.settings,
    currentSettings: inputs.currentSettings,
    env: inputs.env,
    home,
    log: lineLogger(inputs.log),
    credentials: sandbox ? null : inputs.credentials,
    endpoints: inputs.endpoints,
    api: api
      ? {
          setRecordHook: (url: string) => api().setRecordHook(url),
          setChannelHook: (url: string) => api().setChannelHook(url),
          search: (q: { since: Date; until: Date }) => api().search(q),
        }
      : null,
    ngrokAuthtoken: inputs.ngrokAuthtoken,
    demo: sandbox ? demoPipeline(home, sandbox) : null,
  });
  return { spec: { ...options, ...inputs.overrides }, key, studio };
}
