import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  type CertificateProbe,
  describeCertificateProblem,
  hostAndPort,
  isFingerprint,
  normalizeFingerprint,
  type ProbeOptions,
  probeServerCertificate,
  type ServerTrust,
} from '@molf/client/node';
import { MolfError } from '@molf/protocol';
import { isLoopbackHost } from '../is-loopback-host.ts';
import { type KnownServer, type KnownServers, knownServers } from './known-servers.ts';
import { serverKey } from './server-key.ts';

const EXPIRY_WARNING_DAYS = 30;
const DAY_MS = 86_400_000;

export type TrustRequest = {
  /** The server's URL: `wss://` is verified, `ws://` is plain (loopback and trusted networks). */
  url: string;
  /** `--tls-ca`: a PEM file with the CA that signed the server's certificate. */
  caFile?: string | undefined;
  /** `--fingerprint`: the SHA-256 the server's certificate must have (`molf server --print-fingerprint`). */
  fingerprint?: string | undefined;
  /** Asks the person on first contact (trust on first use). Undefined where nobody can answer. */
  ask?: ((question: string) => Promise<boolean>) | undefined;
  /** Lines for the person: a pin saved, a certificate about to expire. */
  tell?: ((line: string) => void) | undefined;
  /** Save a given `--tls-ca` for this server, so later commands need no flag. Default false. */
  rememberCa?: boolean;
  /** Default: `known-servers.json` in the client dir. */
  store?: KnownServers;
  now?: () => number;
};

/**
 * How to verify the server of `url` before anything is sent to it: undefined for `ws://`, else a
 * trust for every TLS handshake. Order: `--tls-ca`, then what is saved for this URL (a CA file or a
 * pinned certificate, which must still be the one the server shows), then the system's CAs, then a
 * given `--fingerprint`, then the person (the fingerprint shown, y/N). A given `--fingerprint` is
 * also a condition on all the others: whatever vouches for the server, a certificate with another
 * fingerprint is refused. Each refusal is a `server_untrusted` error that says what was seen, that
 * nothing was sent, and what to do.
 */
export async function resolveServerTrust(request: TrustRequest): Promise<ServerTrust | undefined> {
  const { url } = request;
  const key = serverKey(url);
  const given = parseGivenFingerprint(request.fingerprint);
  if (key.startsWith('ws:')) {
    const { host } = hostAndPort(url);
    if (!isLoopbackHost(host)) {
      request.tell?.(
        `the link to ${key} is not encrypted: the token and everything else travel in clear (use wss:// unless this network is yours alone)`,
      );
    }
    return undefined;
  }
  const store = request.store ?? knownServers();
  const now = request.now ?? Date.now;

  if (request.caFile !== undefined && request.caFile !== '') {
    const caFile = resolve(request.caFile);
    const trust = await checkCaFile(url, caFile, given);
    // Saved only once it vouches for the server: a wrong file must not replace a good pin.
    if (request.rememberCa === true) {
      await store.set(url, { type: 'ca', caFile, savedAt: new Date(now()).toISOString() });
    }
    return trust;
  }
  const known = await store.get(url);
  if (known?.type === 'ca') return checkCaFile(url, known.caFile, given);

  const probe = await probeTls(url);
  if (given !== undefined) requireGivenFingerprint(url, probe, given);
  if (known?.type === 'pinned') return checkPin(url, known, probe, request.tell, now);
  if (probe.trusted) return { type: 'system' };

  const seen = normalizeFingerprint(probe.fingerprint256);
  // A pin of such a certificate would fail every handshake: say so instead of asking.
  requireValidNow(url, probe, now);
  if (!probe.selfSigned) {
    throw new MolfError(
      'server_untrusted',
      `the server at ${url} shows a certificate issued by "${probe.issuer}", which this machine does not trust ` +
        `(${probe.authorizationError ?? 'unknown issuer'}). Nothing was sent. Give the CA that signed it: --tls-ca FILE.`,
    );
  }
  if (given === undefined) {
    const question = describeUnknown(url, probe);
    if (
      request.ask === undefined ||
      !(await request.ask(`${question}\nTrust this server and pin its certificate? [y/N] `))
    ) {
      throw new MolfError(
        'server_untrusted',
        `the server at ${url} shows a certificate this machine has not seen (SHA-256 ${seen}). Nothing was sent. ` +
          'Compare it with `molf server --print-fingerprint` on the server, then pin it: ' +
          `\`molf trust ${key} --fingerprint ${seen}\` (or pass --fingerprint once, or run this in a terminal to be asked).`,
      );
    }
  }
  const pin: KnownServer = {
    type: 'pinned',
    fingerprint256: seen,
    cert: probe.cert,
    pinnedAt: new Date(now()).toISOString(),
    validTo: probe.validTo.toISOString(),
  };
  await store.set(url, pin);
  request.tell?.(`pinned the certificate of ${key} (SHA-256 ${seen}) in ${store.path}`);
  warnOfExpiry(url, probe.validTo, request.tell, now);
  return { type: 'pinned', fingerprint256: seen, cert: probe.cert };
}

function requireValidNow(url: string, probe: Extract<CertificateProbe, { type: 'tls' }>, now: () => number): void {
  const key = serverKey(url);
  if (probe.validTo.getTime() < now()) {
    throw new MolfError(
      'server_untrusted',
      `the server at ${key} shows a certificate that expired on ${probe.validTo.toISOString().slice(0, 10)}: ` +
        'renew it on the server (`molf server --renew-cert`), then connect again. Nothing was sent.',
    );
  }
  if (probe.validFrom.getTime() > now()) {
    throw new MolfError(
      'server_untrusted',
      `the server at ${key} shows a certificate valid only from ${probe.validFrom.toISOString()}: ` +
        "check this machine's clock and the server's. Nothing was sent.",
    );
  }
}

/** A given `--fingerprint` in the `AB:CD:…` form, or undefined when none was given; not one is an error. */
function parseGivenFingerprint(fingerprint: string | undefined): string | undefined {
  if (fingerprint === undefined || fingerprint === '') return undefined;
  if (!isFingerprint(fingerprint)) {
    throw new MolfError(
      'invalid_input',
      `--fingerprint ${fingerprint} is not a SHA-256 fingerprint (32 bytes in hex, e.g. as \`molf server --print-fingerprint\` prints it)`,
      { field: 'fingerprint' },
    );
  }
  return normalizeFingerprint(fingerprint);
}

/**
 * The trust of a CA file, once a handshake showed that it vouches for the server (signed its
 * certificate, for the URL's host name) and that the certificate has a given fingerprint.
 */
async function checkCaFile(url: string, caFile: string, given: string | undefined): Promise<ServerTrust> {
  const trust: ServerTrust = { type: 'ca', ca: await readCaFile(caFile) };
  const probe = await probeTls(url, { ca: trust.ca });
  if (!probe.trusted) {
    const problem =
      describeCertificateProblem({
        code: probe.authorizationError ?? '',
        host: hostAndPort(url).host,
        names: probe.names,
        trust,
      }) ?? `${probe.authorizationError ?? 'refused'}`;
    throw new MolfError(
      'server_untrusted',
      `the CA file ${caFile} does not vouch for the server at ${url}: ${problem}. Nothing was sent. ` +
        `(The server's certificate: issued by "${probe.issuer}", SHA-256 ${normalizeFingerprint(probe.fingerprint256)}.)`,
    );
  }
  if (given !== undefined) requireGivenFingerprint(url, probe, given);
  return trust;
}

/** What the server of a `wss://` URL shows, sending nothing; a port that does not speak TLS is an error saying so. */
async function probeTls(url: string, options: ProbeOptions = {}): Promise<Extract<CertificateProbe, { type: 'tls' }>> {
  const probe = await probeServerCertificate(url, options);
  if (probe.type === 'not-tls') {
    throw new MolfError(
      'invalid_input',
      `the server at ${url} does not speak TLS (it answered a TLS hello with something else): ` +
        `if it is a plain server on loopback or a trusted network, use ws://${serverKey(url).slice('wss://'.length)}`,
      { field: 'server' },
    );
  }
  return probe;
}

function requireGivenFingerprint(url: string, probe: Extract<CertificateProbe, { type: 'tls' }>, given: string): void {
  const seen = normalizeFingerprint(probe.fingerprint256);
  if (given !== seen) {
    throw new MolfError(
      'server_untrusted',
      `the server at ${url} shows a certificate with SHA-256 ${seen}, not the fingerprint you gave (${given}). ` +
        'Nothing was sent. Either this is not your server (a man in the middle, or the wrong address), or the ' +
        'fingerprint was mistyped: compare it again with `molf server --print-fingerprint` on the server.',
    );
  }
}

function checkPin(
  url: string,
  pin: Extract<KnownServer, { type: 'pinned' }>,
  probe: Extract<CertificateProbe, { type: 'tls' }>,
  tell: TrustRequest['tell'],
  now: () => number,
): ServerTrust {
  const seen = normalizeFingerprint(probe.fingerprint256);
  if (seen !== pin.fingerprint256) {
    const key = serverKey(url);
    throw new MolfError(
      'server_untrusted',
      `the server at ${key} shows a certificate that is not the one pinned on ${pin.pinnedAt.slice(0, 10)}:\n` +
        `  pinned: SHA-256 ${pin.fingerprint256}\n` +
        `  shown:  SHA-256 ${seen}\n` +
        'Nothing was sent. Either someone is in the middle, or the server has a new certificate ' +
        '(`molf server --renew-cert`, a new data dir). If it is new, check the fingerprint on the server ' +
        `(\`molf server --print-fingerprint\`) and pin it: \`molf trust ${key} --fingerprint ${seen}\`.`,
    );
  }
  warnOfExpiry(url, probe.validTo, tell, now);
  return { type: 'pinned', fingerprint256: pin.fingerprint256, cert: pin.cert };
}

function warnOfExpiry(url: string, validTo: Date, tell: TrustRequest['tell'], now: () => number): void {
  const days = Math.floor((validTo.getTime() - now()) / DAY_MS);
  if (days <= EXPIRY_WARNING_DAYS) {
    tell?.(
      days < 0
        ? `the certificate of ${serverKey(url)} expired on ${validTo.toISOString().slice(0, 10)}: renew it on the server (\`molf server --renew-cert\`)`
        : `the certificate of ${serverKey(url)} expires in ${days} day${days === 1 ? '' : 's'} (${validTo.toISOString().slice(0, 10)}): renew it on the server (\`molf server --renew-cert\`) and pin the new one`,
    );
  }
}

function describeUnknown(url: string, probe: Extract<CertificateProbe, { type: 'tls' }>): string {
  return [
    `The server at ${serverKey(url)} is not known to this machine. It shows a self-signed certificate:`,
    `  SHA-256 ${normalizeFingerprint(probe.fingerprint256)}`,
    `  for ${probe.names === '' ? '(no names)' : probe.names}, valid until ${probe.validTo.toISOString().slice(0, 10)}`,
    'Compare the fingerprint with what `molf server --print-fingerprint` prints on the server machine.',
  ].join('\n');
}

async function readCaFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new MolfError('config_invalid', `cannot read the CA file ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new MolfError('config_invalid', `the CA file ${path} holds no PEM certificate`);
  }
  return text;
}
