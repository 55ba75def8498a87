/**
 * A count with its noun in English, for the CLI and the log (the popover's texts choose their forms with
 * Intl.PluralRules): "no problems", "1 problem", "3 problems", never "0 problem(s)".
 */

/** `count` and the noun's form for it; `zero` (default "no <other>") when there are none. */
export function counted(count: number, one: string, other: string, zero = `no ${other}`): string {
  if (count === 0) return zero;
  return `${count} ${count === 1 ? one : other}`;
}
