/**
 * Keeps a test file's traffic on loopback and proves it: every socket connection to anything but
 * 127.0.0.1/::1/localhost, and every DNS lookup of any other name, is refused before it happens and
 * recorded. Vitest runs each file in its own process, so the patch never leaks into another file.
 */
import dns from 'node:dns';
import net from 'node:net';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '::ffff:127.0.0.1']);

export interface NetworkGuard {
  /** `host:port` of refused connections and `dns <name>` of refused lookups, in order. */
  readonly attempts: string[];
  restore(): void;
}

export function guardNetwork(): NetworkGuard {
  const attempts: string[] = [];
  const connect = net.Socket.prototype.connect;
  const lookup = dns.lookup;
  net.Socket.prototype.connect = function guarded(this: net.Socket, ...args: unknown[]) {
    const first = args[0];
    const opts = (typeof first === 'object' && first !== null && !Array.isArray(first) ? first : {}) as {
      host?: string;
      path?: string;
      port?: number;
    };
    const host = opts.host ?? (typeof args[1] === 'string' ? args[1] : undefined);
    if (!opts.path && host !== undefined && !LOOPBACK.has(host)) {
      attempts.push(`${host}:${opts.port ?? String(first)}`);
      process.nextTick(() =>
        this.destroy(Object.assign(new Error('blocked by the network guard'), { code: 'ECONNREFUSED' })),
      );
      return this;
    }
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof connect;
  dns.lookup = function guardedLookup(this: unknown, hostname: string, ...rest: unknown[]) {
    if (!LOOPBACK.has(hostname)) {
      attempts.push(`dns ${hostname}`);
      const callback = rest[rest.length - 1] as (error: Error) => void;
      process.nextTick(() =>
        callback(Object.assign(new Error(`lookup of ${hostname} blocked by the network guard`), { code: 'ENOTFOUND' })),
      );
      return undefined;
    }
    return (lookup as (...a: unknown[]) => unknown).call(this, hostname, ...rest);
  } as typeof lookup;
  return {
    attempts,
    restore() {
      net.Socket.prototype.connect = connect;
      dns.lookup = lookup;
    },
  };
}
