import { render, screen, within } from '@testing-library/svelte';
import { describe, expect, it, onTestFinished } from 'vitest';
import { formatDateTime, setLocale } from '../../lib/i18n.js';
import { gapReport } from '../../../testing/bridge.js';
import MissedRecordings from './MissedRecordings.svelte';

const CLOSED = '2024-05-14T11:40:00Z';
const ENDED = '2024-05-14T01:00:00Z';

describe('MissedRecordings', () => {
  it('lists live findings with their close time, apart from the gap report and its error', () => {
    render(MissedRecordings, {
      gaps: gapReport({
        missing: [
          { channelId: 'closed-live', endedAt: CLOSED, live: true },
          { channelId: 'gone-1', endedAt: ENDED },
        ],
        error: 'search failed',
      }),
    });
    const expected = screen.getByRole('region', { name: 'Expected, not received' });
    const item = within(within(expected).getByRole('list', { name: 'Expected, not received' })).getByRole('listitem');
    expect(item).toHaveTextContent('closed-live');
    expect(item).toHaveTextContent(`Closed ${formatDateTime(CLOSED)}`);
    expect(within(expected).queryByRole('alert')).not.toBeInTheDocument();

    const missed = screen.getByRole('region', { name: 'Possibly missed' });
    expect(within(missed).getByRole('listitem')).toHaveTextContent(`gone-1 Ended ${formatDateTime(ENDED)}`);
    expect(within(missed).getByRole('alert')).toHaveTextContent('Could not check for missed recordings: search failed');
  });

  it('shows only the live section when the gap report found nothing, in Korean too', () => {
    setLocale('ko');
    onTestFinished(() => setLocale('en'));
    render(MissedRecordings, {
      gaps: gapReport({ missing: [{ channelId: 'closed-2', endedAt: CLOSED, live: true }] }),
    });
    expect(screen.getAllByRole('region')).toHaveLength(1);
    const expected = screen.getByRole('region', { name: '받지 못한 녹화' });
    expect(within(expected).getByRole('listitem')).toHaveTextContent('closed-2');
  });

  it('renders nothing without findings', () => {
    const { container } = render(MissedRecordings, { gaps: gapReport() });
    expect(container.querySelectorAll('section')).toHaveLength(0);
  });
});
