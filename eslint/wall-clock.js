// @ts-check
/**
 * The rule `tally/wall-clock` (issue 30): timing code never reads the wall clock, and reads the monotonic one
 * only through electron/core/time.ts. `Date.now()` steps with NTP or a user's hand (seven hours forward on a
 * dual-boot PC, a day back), so a deadline, stall window, retry time, throttle or age measured with it expires
 * recordings the service still holds, or freezes work. `performance.now()` never steps but stands still while a
 * laptop sleeps, so a duration read from it disagrees with the deadlines of time.ts's `systemClock` (which counts
 * the sleep) and cannot be moved by a test. Durations come from a `Clock` of time.ts (`clock.now()`, default
 * `systemClock`), and a wall time to show or store from `wallNow()` / `clock.wall()` there, where the two clocks
 * are compared to see steps.
 *
 * Reported, in the files eslint.config.js gives the rule (all of electron/ but time.ts and a short list):
 * - any use of `Date.now`, called or handed over as a clock (`now ?? Date.now`);
 * - any use of `performance.now` (also `globalThis.performance.now`), called or handed over as a clock;
 * - `performance` imported from `node:perf_hooks` (under any name, so an alias does not walk around the above);
 * - `new Date()` read as a number: `new Date().getTime()`, `.valueOf()`, `+new Date()`, or an operand of
 *   arithmetic or a comparison. `new Date().toISOString()` (a time to store or show) is fine.
 */

const ARITHMETIC = new Set(['-', '+', '<', '>', '<=', '>=', '*', '/']);

/** @param {any} node */
const isNewDateNow = (node) =>
  node?.type === 'NewExpression' &&
  node.callee.type === 'Identifier' &&
  node.callee.name === 'Date' &&
  node.arguments.length === 0;

/** @type {import('eslint').Rule.RuleModule} */
const wallClock = {
  meta: {
    type: 'problem',
    docs: { description: 'Timing code measures on the monotonic clock of electron/core/time.ts, never Date.now().' },
    schema: [],
    messages: {
      dateNow:
        'Date.now() steps with the wall clock: take a Clock from electron/core/time.ts (clock.now() for a duration, deadline or age; wallNow() only for a time to show or store).',
      performanceNow:
        'performance.now() bypasses the core clock (it stands still through a suspend and no test can move it): take a Clock from electron/core/time.ts (systemClock.now by default).',
      performanceImport:
        'performance from node:perf_hooks bypasses the core clock: take a Clock from electron/core/time.ts (systemClock.now by default).',
      newDateNumber:
        'new Date() read as a number steps with the wall clock: measure durations with clock.now() from electron/core/time.ts.',
    },
  },
  create(context) {
    return {
      /** @param {any} node */
      ImportDeclaration(node) {
        if (node.source.value !== 'node:perf_hooks' && node.source.value !== 'perf_hooks') return;
        for (const spec of node.specifiers) {
          const imported = spec.type === 'ImportSpecifier' ? spec.imported : null;
          const name = imported?.type === 'Identifier' ? imported.name : imported?.value;
          // The whole module (`import * as hooks`, a default import) reaches performance too.
          if (name === 'performance' || spec.type !== 'ImportSpecifier') {
            context.report({ node: spec, messageId: 'performanceImport' });
          }
        }
      },
      /** @param {any} node */
      MemberExpression(node) {
        if (
          node.object.type === 'Identifier' &&
          node.object.name === 'Date' &&
          !node.computed &&
          node.property.type === 'Identifier' &&
          node.property.name === 'now'
        ) {
          context.report({ node, messageId: 'dateNow' });
          return;
        }
        if (
          !node.computed &&
          node.property.type === 'Identifier' &&
          node.property.name === 'now' &&
          ((node.object.type === 'Identifier' && node.object.name === 'performance') ||
            (node.object.type === 'MemberExpression' &&
              !node.object.computed &&
              node.object.property.type === 'Identifier' &&
              node.object.property.name === 'performance'))
        ) {
          context.report({ node, messageId: 'performanceNow' });
          return;
        }
        if (
          isNewDateNow(node.object) &&
          node.property.type === 'Identifier' &&
          ['getTime', 'valueOf'].includes(node.property.name)
        ) {
          context.report({ node, messageId: 'newDateNumber' });
        }
      },
      /** @param {any} node */
      NewExpression(node) {
        if (!isNewDateNow(node)) return;
        const parent = node.parent;
        const numeric =
          (parent?.type === 'BinaryExpression' && ARITHMETIC.has(parent.operator)) ||
          (parent?.type === 'UnaryExpression' && (parent.operator === '+' || parent.operator === '-'));
        if (numeric) context.report({ node, messageId: 'newDateNumber' });
      },
    };
  },
};

export default wallClock;
