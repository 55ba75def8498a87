/**
 * A row of filter chips that never leaves one chip alone on a line: counts are kept short (999+), and when the
 * row cannot hold every chip on one line it becomes two rows of equal columns (the `crowded` class), measured
 * again whenever the row or a count changes.
 */
import type { Attachment } from 'svelte/attachments';

/** The most a chip shows as a number; more reads `999+` (the exact count is in its title). */
export const MAX_SHOWN_COUNT = 999;

/** A count as a chip shows it: `999+` beyond MAX_SHOWN_COUNT. */
export function chipCount(count: number): string {
  return count > MAX_SHOWN_COUNT ? `${MAX_SHOWN_COUNT}+` : String(count);
}

/**
 * Sets `crowded` on the row while its chips do not fit on one line. `texts` (what the chips say) is read so a
 * change of it measures again (the attachment reruns); the ResizeObserver follows the window.
 */
export function crowdedWhenFull(texts: () => string): Attachment<HTMLElement> {
  return (row) => {
    void texts();
    const measure = () => {
      // Measured as one line, then set at once: the observer sees only the final size, so it does not loop.
      row.classList.remove('crowded');
      row.classList.toggle('crowded', row.scrollWidth > row.clientWidth + 0.5);
    };
    measure();
    // jsdom has no ResizeObserver.
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(row);
    return () => observer.disconnect();
  };
}
