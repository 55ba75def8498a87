/** The zod trust boundary of the core: `parseUnknown` and the one-line wording of what did not match. */
import type { z } from 'zod';
import { ValidationError } from './errors.js';

/** One readable line per zod issue: `items[3].createTime: expected number, received string`. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): { paths: string[]; detail: string } {
  const paths: string[] = [];
  const lines: string[] = [];
  for (const issue of issues.slice(0, 5)) {
    const path = formatPath(issue.path);
    paths.push(path);
    lines.push(`${path || '(root)'}: ${issue.message}`);
  }
  if (issues.length > 5) lines.push(`and ${issues.length - 5} more`);
  return { paths, detail: lines.join('; ') };
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/**
 * Only an `unknown` goes in; a typed value or a precise error listing the bad paths comes out.
 * `makeError` lets a boundary choose its own error class (e.g. ResponseShapeError for API answers).
 */
export function parseUnknown<S extends z.ZodType>(
  schema: S,
  data: unknown,
  makeError: (paths: string[], detail: string) => Error = (paths, detail) => new ValidationError(paths, detail),
): z.output<S> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const { paths, detail } = describeIssues(result.error.issues);
  throw makeError(paths, detail);
}
