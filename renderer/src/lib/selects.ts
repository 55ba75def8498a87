/** The `selects` attachment: the wide layout's list item that shows itself in the detail pane. */
import type { Attachment } from 'svelte/attachments';

/**
 * The wide window's list + detail: a click anywhere in an item, or keyboard focus reaching one of its buttons,
 * shows that item in the detail pane, so Tab through the list keeps the pane in step.
 */
export function selects(select: () => void): Attachment<HTMLElement> {
  return (element) => {
    element.addEventListener('click', select);
    element.addEventListener('focusin', select);
    return () => {
      element.removeEventListener('click', select);
      element.removeEventListener('focusin', select);
    };
  };
}
