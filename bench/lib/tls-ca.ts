/**
 * A throwaway certificate authority for the HTTPS benches, made at bench time with the `openssl` command: a CA
 * certificate and a server certificate for 127.0.0.1 signed by it (ECDSA P-256, valid one day). nginx serves
 * with the server pair; Tally trusts the CA through NODE_EXTRA_CA_CERTS (its normal TLS verification, nothing
 * turned off) and curl through `--cacert`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from './harness.js';

export interface BenchTls {
  /** The CA's certificate (PEM): what clients are told to trust. */
  caFile: string;
  /** nginx's certificate and key (PEM). */
  certFile: string;
  keyFile: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  const r = await runCommand('openssl', args, { cwd }).catch((error: unknown) => {
    throw new Error(`openssl could not be started (${String(error)}): install it (Debian package openssl)`);
  });
  if (r.code !== 0) throw new Error(`openssl ${args[0]} failed (${r.code}): ${r.stderr.slice(-500)}`);
}

/** Creates the CA and the server certificate for 127.0.0.1 in `dir`. */
export async function makeBenchTls(dir: string): Promise<BenchTls> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '1',
      '-subj',
      '/CN=Tally bench CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  await openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1'], dir);
  await writeFile(
    join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.crt',
      '-days',
      '1',
      '-extfile',
      'server.ext',
    ],
    dir,
  );
  return { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
}
