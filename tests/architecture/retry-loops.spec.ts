/**
 * One retry primitive (issue 35): a retry is `RetryLoop` (electron/core/retry-loop.ts, from a timer) or
 * `retrying` (electron/core/backoff.ts, awaited). This spec reads every production file of electron/ and the
 * renderer with the TypeScript parser and finds the retry loops written by hand: a timer armed or a sleep awaited
 * in a failure path (a `catch` block, a `.catch(...)` handler, a function named for a failure or a retry) or in a
 * file that computes a retry's wait itself (`backoffDelay`, `retryDelay`). The ones that remain are listed with the reason they may; a new one fails here.
 */
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './imports.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The primitive itself. */
const PRIMITIVE = new Set(['electron/core/backoff.ts', 'electron/core/retry-loop.ts']);

/**
 * Hand-written retry loops still allowed, each with its reason. Shrink this list; never grow it.
 */
const ALLOWED: Record<string, string> = {
  // 5,000 jobs share one timer (pipeline/retry-schedule.ts); their due times come from `backoffDelay`.
  'electron/core/pipeline/download-manager.ts': 'one heap-ordered timer for every waiting job',
};

/** Calls that wait: a timer, or a sleep that a loop awaits. */
const WAITS = new Set(['setTimeout', 'setInterval', 'abortableDelay', 'sleep', 'delay']);
/** Calls that compute a retry's wait from the policy. */
const POLICY = new Set(['backoffDelay', 'retryDelay']);

function calleeName(node: ts.CallExpression | ts.NewExpression): string | null {
  const callee = node.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return null;
}

/** A function or method named for a failure or a retry (`#cannotListen`, `scheduleReconnect`, `onFailure`). */
const FAILURE_NAME = /retry|reconnect|backoff|fail|cannot|again/i;

/**
 * Whether `node` sits in a failure path: a `catch` block, a function given to `.catch(...)`, or a function named
 * for a failure or a retry.
 */
function inFailurePath(node: ts.Node): boolean {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if (ts.isCatchClause(at)) return true;
    if (
      (ts.isMethodDeclaration(at) || ts.isFunctionDeclaration(at)) &&
      at.name &&
      (ts.isIdentifier(at.name) || ts.isPrivateIdentifier(at.name)) &&
      FAILURE_NAME.test(at.name.text)
    ) {
      return true;
    }
    if (
      (ts.isArrowFunction(at) || ts.isFunctionExpression(at)) &&
      ts.isCallExpression(at.parent) &&
      ts.isPropertyAccessExpression(at.parent.expression) &&
      at.parent.expression.name.text === 'catch'
    ) {
      return true;
    }
  }
  return false;
}

/** The hand-written retry loops of `code`: one line per wait in a failure path or beside the policy. */
export function handWrittenRetries(file: string, code: string): string[] {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true);
  const waits: ts.CallExpression[] = [];
  let usesPolicy = false;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const name = calleeName(node);
      if (name && POLICY.has(name)) usesPolicy = true;
      if (name && ts.isCallExpression(node) && WAITS.has(name)) waits.push(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return waits
    .filter((call) => usesPolicy || inFailurePath(call))
    .map((call) => `${file}:${source.getLineAndCharacterOfPosition(call.getStart()).line + 1}`);
}

describe('one retry primitive', () => {
  const files = [...sourceFiles(`${ROOT}/electron`), ...sourceFiles(`${ROOT}/renderer/src`)]
    .map((path) => relative(ROOT, path))
    .filter((path) => !/\.(spec|e2e)\.ts$/.test(path) && !PRIMITIVE.has(path));

  it('has no retry loop written by hand outside the primitive, beyond the listed ones', () => {
    expect(files).toContain('electron/core/tunnels/supervisor.ts');
    const found = new Set(
      files
        .flatMap((file) => handWrittenRetries(file, readFileSync(`${ROOT}/${file}`, 'utf8')))
        .map((at) => at.split(':')[0]!),
    );
    expect([...found].filter((file) => !(file in ALLOWED)).sort()).toEqual([]);
    // A loop moved onto the primitive leaves the list too.
    expect(Object.keys(ALLOWED).filter((file) => !found.has(file))).toEqual([]);
  });

  it.each([
    [
      'a timer armed in a catch block',
      `export async function connect(open: () => Promise<void>): Promise<void> {
         try { await open(); } catch { setTimeout(() => void connect(open), 1_000); }
       }`,
    ],
    [
      'a timer armed in a .catch handler',
      `export function connect(open: () => Promise<void>): void {
         open().catch(() => { setTimeout(() => connect(open), 1_000).unref(); });
       }`,
    ],
    [
      'a sleep on the policy in a loop',
      `import { abortableDelay, backoffDelay } from '../backoff.js';
       export async function connect(open: () => Promise<boolean>): Promise<void> {
         for (let n = 1; !(await open()); n++) await abortableDelay(backoffDelay(n, { baseMs: 1, maxMs: 9 }));
       }`,
    ],
    [
      'a timer on the policy outside a catch',
      `import { backoffDelay } from '../backoff.js';
       let failures = 0;
       export function failed(retry: () => void): void {
         failures += 1;
         setTimeout(retry, backoffDelay(failures, { baseMs: 1, maxMs: 9 }));
       }`,
    ],
    [
      'a timer armed in a method named for the failure (the port retry pipeline.ts once had)',
      `export class Receiver {
         #waitMs = 2_000;
         #cannotListen(): void {
           setTimeout(() => this.listen(), this.#waitMs).unref();
         }
         listen(): void { this.#cannotListen(); }
       }`,
    ],
  ])('catches %s', (_what, code) => {
    expect(handWrittenRetries('electron/core/tunnels/fixture.ts', code)).toHaveLength(1);
  });

  it('lets a timer that retries nothing be (a timeout, a periodic check)', () => {
    const code = `export function withTimeout(ms: number): Promise<void> {
      return new Promise((resolve) => { setTimeout(resolve, ms).unref(); });
    }`;
    expect(handWrittenRetries('electron/core/tunnels/fixture.ts', code)).toEqual([]);
  });
});
