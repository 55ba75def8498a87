import { describe, expect, it } from 'vitest';
import { NetworkError, ServiceError, TimeoutError, UnknownChannelError, ConfigError } from '../errors.js';
import { errorEnvelope } from './dispatch.js';

describe('errorEnvelope', () => {
  it('sends the specifics of a core error as params beside its English message, for the popover to translate', () => {
    const views = [
      new UnknownChannelError('main-stage'),
      new ServiceError(503, '<html>busy</html>', 'broadcast-channel-list'),
      new TimeoutError('search', 12_500),
      new NetworkError('signal.example.test', 'connect ECONNREFUSED'),
    ].map((error) => errorEnvelope(error));
    // The same views renderer/src/lib/errors.spec.ts translates.
    expect(views).toEqual([
      {
        ok: false,
        error: {
          code: 'unknown_channel',
          message: 'The service has no live channel with ID "main-stage".',
          params: { channel: 'main-stage' },
        },
      },
      {
        ok: false,
        error: {
          code: 'service_error',
          message: 'The service answered 503 for broadcast-channel-list: <html>busy</html>.',
          params: { status: 503, endpoint: 'broadcast-channel-list' },
        },
      },
      {
        ok: false,
        error: {
          code: 'timeout',
          message: 'The service did not answer search within 12.5 s.',
          params: { endpoint: 'search', seconds: 12.5 },
        },
      },
      {
        ok: false,
        error: {
          code: 'network',
          message:
            'Could not reach the service for signal.example.test: connect ECONNREFUSED. Check the network connection and the host settings.',
          params: { endpoint: 'signal.example.test' },
        },
      },
    ]);
  });

  it('sends no params for an error without any, and nothing but a generic message for an unexpected one', () => {
    expect(errorEnvelope(new ConfigError('Set a folder.'))).toEqual({
      ok: false,
      error: { code: 'config', message: 'Set a folder.' },
    });
    const lines: string[] = [];
    expect(errorEnvelope(new Error('boom at /home/x'), { log: (l) => lines.push(l) })).toEqual({
      ok: false,
      error: { code: 'internal', message: 'Something went wrong in Tally. The details are in the log.' },
    });
    expect(lines).toEqual(['a request failed: boom at /home/x']);
  });
});
