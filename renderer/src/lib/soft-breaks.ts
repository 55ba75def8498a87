/**
 * Where a long run without spaces (a file name, a path, an address) may wrap: after each `-`, `_`, `.`, `/` or
 * `\`, so it breaks between its parts and not mid-word. The text is cut into pieces at those points; a `<wbr>`
 * between pieces (components/BreakableText.svelte) offers the break without changing what is copied.
 */

/** Runs shorter than this fit any line the popover has: they get no break chances of their own. */
const MIN_RUN = 12;

/** `text` cut after each separator inside its long runs; joined, the pieces are `text` again. */
export function softBreaks(text: string): string[] {
  const pieces: string[] = [];
  let current = '';
  for (const token of text.split(/(\s+)/)) {
    if (token.length < MIN_RUN || /^\s/.test(token)) {
      current += token;
      continue;
    }
    // After a separator (or a run of them), before the next character that is not one.
    const [first = '', ...rest] = token.split(/(?<=[-_./\\])(?=[^-_./\\])/);
    current += first;
    for (const piece of rest) {
      pieces.push(current);
      current = piece;
    }
  }
  pieces.push(current);
  return pieces;
}
