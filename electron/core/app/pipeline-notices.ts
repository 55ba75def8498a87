/**
 * What the pipeline's events say as desktop notifications (the `notify` push): a recording saved, failed,
 * expired or expected but missing, an upload saved or refused, a channel live, the webhook unreachable, new
 * webhooks refused. Each carries its catalogue keys and notes, so the tray app says it in the producer's language.
 */
import { basename } from 'node:path';
import { note, notesText, type Note, type TunnelStatus } from '../../contract.js';
import type { MissingRecording } from '../pipeline/expected-recordings.js';
import type { PipelineEvents } from '../pipeline/pipeline.js';
import { clean, describe } from './core-messages.js';
import { refusalNotes } from './recording-views.js';
import type { AppCoreEvents } from './types.js';

type Notice = AppCoreEvents['notify'];
type Event<K extends keyof PipelineEvents> = PipelineEvents[K][0];

export function savedNotice(e: Event<'saved'>): Notice {
  return {
    kind: 'saved',
    title: 'Recording saved',
    body: clean(basename(e.path), 200),
    text: { title: { key: 'savedTitle' } },
    path: e.path,
  };
}

export function failedNotice(e: Event<'failed'>): Notice {
  return {
    kind: 'failed',
    title: 'Recording failed',
    body: clean(`${e.job.channelId}: ${e.job.error ?? describe(e.error)}`, 200),
    ...(e.job.errorNotes
      ? { bodyNotes: [note('channelSays', { channel: clean(e.job.channelId, 120) }), ...e.job.errorNotes] }
      : {}),
    text: { title: { key: 'failedTitle' } },
  };
}

export function expiredNotice(e: Event<'expired'>): Notice {
  return {
    kind: 'expired',
    title: 'Recording expired',
    body: clean(`${e.job.channelId}: the service deleted it before it could be downloaded.`, 200),
    text: {
      title: { key: 'expiredTitle' },
      body: { key: 'expiredBody', params: { channel: clean(e.job.channelId, 120) } },
    },
  };
}

export function uploadedNotice(e: Event<'uploaded'>): Notice {
  return {
    kind: 'saved',
    title: 'Upload saved',
    body: clean(e.fileName, 200),
    text: { title: { key: 'uploadSavedTitle' } },
    path: e.path,
  };
}

export function refusedNotice(record: Event<'upload-refused'>): Notice {
  const bodyNotes = refusalNotes({
    ...record,
    channelId: record.channelId === null ? null : clean(record.channelId, 120),
    fileName: record.fileName === null ? null : clean(record.fileName, 120),
  });
  return {
    kind: 'refused',
    title: 'Client recording refused',
    body: clean(notesText(bodyNotes), 200),
    // Which recording and why, as notes: the tray app says them in the producer's language.
    bodyNotes,
    text: { title: { key: 'uploadRefusedTitle' } },
  };
}

export function liveNotice(channelId: string): Notice {
  return {
    kind: 'live',
    title: 'Channel live',
    body: clean(`${channelId} is live.`, 200),
    text: {
      title: { key: 'liveTitle' },
      body: { key: 'liveBody', params: { channel: clean(channelId, 120) } },
    },
  };
}

export function missingNotice(m: MissingRecording): Notice {
  return {
    kind: 'missing',
    title: 'Recording expected but not received',
    body: clean(
      `${m.channelId} closed ${Math.round(m.waitedMs / 60_000)} min ago and no recording arrived; look for it in the service console before it is deleted.`,
      200,
    ),
    text: {
      title: { key: 'missingTitle' },
      body: {
        key: 'missingBody',
        params: { channel: clean(m.channelId, 120), minutes: Math.round(m.waitedMs / 60_000) },
      },
    },
  };
}

export function unreachableNotice(status: TunnelStatus): Notice {
  return {
    kind: 'unreachable',
    title: 'Webhook unreachable',
    body: clean(status.message ?? 'The service cannot reach this computer: recordings will not arrive.', 200),
    // The tunnel's reason as its notes (translated by the tray app); the fallback sentence from the catalogue.
    ...(status.message && status.messageNotes?.length ? { bodyNotes: status.messageNotes } : {}),
    text: { title: { key: 'unreachableTitle' }, ...(status.message ? {} : { body: { key: 'unreachableBody' } }) },
  };
}

export function refusingNotice(reason: string, reasonNote: Note | null): Notice {
  return {
    kind: 'refusing',
    title: 'New recordings are being refused',
    body: clean(reason, 200),
    // The receiver's reason as a note: the tray app says it in the producer's language.
    ...(reasonNote ? { bodyNotes: [reasonNote] } : {}),
    text: { title: { key: 'refusingTitle' } },
  };
}
