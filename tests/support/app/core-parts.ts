/**
 * TEST HELPER (not used by the app): the demo sandbox and the recording pipelines an app core starts, kept
 * through the factories it takes (AppCoreOptions.startSandbox and openPipeline), so a spec drives the sandbox
 * (broadcasts, faults) and reaches the pipeline (its inbox, its receiver) with no accessor on the core (issue 35).
 */
import type { AppCoreOptions } from '../../../electron/core/app/app-core.js';
import type { DemoSandbox } from '../../../electron/core/app/demo.js';
import { RecordingPipeline, type PipelineOptions } from '../../../electron/core/pipeline/pipeline.js';
import { startSandbox, type SandboxOptions } from '../../../electron/core/sandbox/index.js';

export class CoreParts {
  #sandbox: DemoSandbox | null = null;
  #pipeline: RecordingPipeline | null = null;

  /** For `createAppCore`: the real sandbox and pipeline, each kept as it is made. */
  readonly options: Required<Pick<AppCoreOptions, 'startSandbox' | 'openPipeline'>> = {
    startSandbox: async (options: SandboxOptions) => (this.#sandbox = await startSandbox(options)),
    openPipeline: async (options: PipelineOptions) => (this.#pipeline = await RecordingPipeline.open(options)),
  };

  /** The demo sandbox the core started last (closed since when the core left demo mode). */
  get sandbox(): DemoSandbox {
    if (!this.#sandbox) throw new Error('the core started no demo sandbox');
    return this.#sandbox;
  }

  /** Whether the core started a demo sandbox at all. */
  get startedSandbox(): boolean {
    return this.#sandbox !== null;
  }

  /** The recording pipeline the core opened last (the one receiving, unless it failed to start). */
  get pipeline(): RecordingPipeline {
    if (!this.#pipeline) throw new Error('the core opened no recording pipeline');
    return this.#pipeline;
  }
}

/** Whether the sandbox's API still answers: a sandbox the core closed refuses the connection. */
export async function sandboxAnswers(sandbox: { apiUrl: string }): Promise<boolean> {
  return fetch(`${sandbox.apiUrl}/_sandbox`).then(
    () => true,
    () => false,
  );
}
