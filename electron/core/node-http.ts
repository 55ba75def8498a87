/**
 * node:http and node:https as the core takes them: from Node's builtin registry, not through an ESM `import`.
 * An ESM import of node:http has Node build the module's whole namespace, and reading its `WebSocket`,
 * `CloseEvent` and `MessageEvent` exports loads Node's bundled fetch client (undici): about 10 MB of every
 * process's memory (issue 22: `tally listen` under 80 MB) for code Tally never runs. node:https, which loads
 * TLS, is taken when the first https request is made. Types still come from `import type` (erased).
 * ESLint refuses a value import of either module in electron/ (eslint.config.js).
 */

/** Node's http module (servers, plain requests, agents). */
export function nodeHttp() {
  return process.getBuiltinModule('node:http');
}

/** Node's https module, loaded (with TLS) on the first call. */
export function nodeHttps() {
  return process.getBuiltinModule('node:https');
}
