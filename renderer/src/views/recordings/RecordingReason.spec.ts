import { render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import RecordingReason from './RecordingReason.svelte';

const REASON =
  'The recording was not downloaded: redirect refused: https://recordings-archive.eu-west-2.storage.elsewhere.example is not an allowed download origin';

/** jsdom lays nothing out: give the paragraph the heights a browser would, clamped to two lines or not. */
function layout(scrollHeight: number, clientHeight: number) {
  vi.spyOn(HTMLElement.prototype, 'scrollHeight', 'get').mockReturnValue(scrollHeight);
  vi.spyOn(HTMLElement.prototype, 'clientHeight', 'get').mockReturnValue(clientHeight);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('RecordingReason', () => {
  it('unfolds a reason cut at two lines with a disclosure button, and folds it again', async () => {
    layout(60, 30);
    render(RecordingReason, { text: REASON, id: 'reason-1' });
    const text = screen.getByText(REASON);
    // Screen readers get the whole text even while it is clamped.
    expect(text).toHaveTextContent(REASON);
    const toggle = screen.getByRole('button', { name: 'Show all' });
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(toggle).toHaveAttribute('aria-controls', 'reason-1');
    expect(text).toHaveAttribute('id', 'reason-1');
    expect(text).not.toHaveClass('open');

    const user = userEvent.setup({ delay: null });
    await user.click(toggle);
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    expect(toggle).toHaveTextContent('Show less');
    expect(text).toHaveClass('open');

    await user.keyboard('{Enter}');
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(text).not.toHaveClass('open');
  });

  it('has no button when the reason fits its two lines', () => {
    layout(30, 30);
    render(RecordingReason, { text: 'The download failed.', id: 'reason-2' });
    expect(screen.getByText('The download failed.')).toBeInTheDocument();
    expect(screen.queryByRole('button')).toBeNull();
  });
});
