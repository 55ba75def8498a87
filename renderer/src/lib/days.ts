/**
 * Local calendar days, for grouping by day. Plain functions over numbers (not reactive state): a Date
 * is only made and dropped inside them.
 */

/** Local midnight (ms) of the day that contains `at` (an ISO string or ms). */
export function localMidnight(at: string | number): number {
  const d = new Date(at);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** Whole local days from `day` to `today` (both local midnights): 0 today, 1 yesterday. */
export function daysBetween(day: number, today: number): number {
  // Rounded: a day with a daylight-saving change is 23 or 25 hours long.
  return Math.round((today - day) / 86_400_000);
}
