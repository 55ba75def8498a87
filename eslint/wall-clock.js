// @ts-check
/**
 * The rule `tally/wall-clock` (issue 30): timing code never reads the wall clock. `Date.now()` steps with NTP
 * or a user's hand (seven hours forward on a dual-boot PC, a day back), so a deadline, stall window, retry
 * time or age measured with it expires recordings the service still holds, or freezes work. Durations come
 * from the monotonic clock of electron/core/time.ts (`clock.now()`), and a wall time to show or store from
 * `wallNow()` / `clock.wall()` there, where the two clocks are compared to see steps.
 *
 * Reported, in the files eslint.config.js gives the rule:
 * - any use of `Date.now`, called or handed over as a clock (`now ?? Date.now`);
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
      newDateNumber:
        'new Date() read as a number steps with the wall clock: measure durations with clock.now() from electron/core/time.ts.',
    },
  },
  create(context) {
    return {
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
