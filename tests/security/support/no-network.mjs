// Preloaded (node --import) into tools that must run offline, such as electronegativity: every attempt
// to leave loopback is refused before a socket opens and reported on stderr as one `NETWORK-ATTEMPT` line,
// so the calling test can fail loudly on anything it did not expect. `got` is replaced outright because
// the scanner calls it for translations on every start; the stub rejects the way an offline machine does.
import dns from 'node:dns';
import Module from 'node:module';
import net from 'node:net';

function report(what) {
  process.stderr.write(`NETWORK-ATTEMPT ${JSON.stringify(String(what))}\n`);
}

function offline(what) {
  report(what);
  return Object.assign(new Error(`network disabled by the test harness (${what})`), { code: 'ENETUNREACH' });
}

function gotStub(url) {
  return Promise.reject(offline(typeof url === 'string' ? url : String(url && url.href ? url.href : url)));
}
for (const verb of ['get', 'post', 'put', 'head', 'delete', 'patch', 'stream', 'paginate', 'extend']) {
  gotStub[verb] = verb === 'extend' ? () => gotStub : gotStub;
}
gotStub.default = gotStub;

const load = Module._load;
Module._load = function patchedLoad(request, parent, isMain) {
  if (request === 'got') return gotStub;
  return load.call(this, request, parent, isMain);
};

const loopback = (host) => host === undefined || host === 'localhost' || host === '::1' || /^127\./.test(host);
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function patchedConnect(...args) {
  const first = args[0];
  const options =
    typeof first === 'object' && first !== null && !Array.isArray(first) ? first : { port: first, host: args[1] };
  if (!options.path && !loopback(typeof options.host === 'string' ? options.host : undefined)) {
    const error = offline(`${options.host}:${options.port}`);
    process.nextTick(() => this.destroy(error));
    return this;
  }
  return connect.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function patchedLookup(hostname, ...rest) {
  const callback = rest[rest.length - 1];
  if (!loopback(hostname)) {
    const error = offline(`dns ${hostname}`);
    process.nextTick(() => callback(error));
    return {};
  }
  return lookup.call(this, hostname, ...rest);
};
