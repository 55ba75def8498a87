/**
 * The tunnel status as the app's views see it (split from pipeline-host.ts): the supervisor's status with the
 * receiver's URLs, the port note, the demo's registration, and why the last restart failed while it matters.
 */
import { note, said, type Note, type TunnelStatus } from '../../contract.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import type { Settings } from '../settings.js';
import type { Phase } from './app-options.js';
import type { DemoWebhookTarget } from './demo.js';
import { tunnelOff } from '../view-shapes.js';

export interface TunnelViewInput {
  pipeline: RecordingPipeline | null;
  settings: Settings;
  phase: Phase;
  demo: DemoWebhookTarget | null;
  /** Why the last reconcile failed (see PipelineHost.failed), as text and notes. */
  error: string | null;
  errorNotes: Note[] | null;
}

export function tunnelView(input: TunnelViewInput): TunnelStatus {
  const { pipeline, settings, phase, demo, errorNotes } = input;
  const restartProblem = input.error && errorNotes ? { message: input.error, notes: errorNotes } : null;
  if (!pipeline) {
    const why = said(...(errorNotes ?? [note(phase === 'new' ? 'receiverStarting' : 'receiverNotRunning')]));
    return { ...tunnelOff(settings.tunnel.provider), message: why.text, messageNotes: why.notes, restartProblem };
  }
  const status = pipeline.supervisor.status;
  let localUrl: string | null;
  try {
    localUrl = pipeline.receiver.localUrl;
  } catch {
    // Not listening (yet or any more): the view shows no local URL rather than failing.
    localUrl = null;
  }
  const notes = [...(errorNotes ?? []), ...(demo ? [note('demoDirect')] : []), ...(status.messageNotes ?? [])];
  const registered = demo ? localUrl !== null && demo.control.webhookUrl === localUrl : status.registered;
  const uploadUrl = status.uploadUrl ?? pipeline.ready().localUploadUrl;
  const message = notes.length > 0 ? said(...notes) : { text: null, notes: null };
  return {
    ...status,
    localUrl,
    uploadUrl,
    registered,
    message: message.text,
    messageNotes: message.notes,
    restartProblem,
  };
}
