import type { PeerCertificate } from 'node:tls';

/**
 * How a client decides that a `wss://` server is the one it means, before it sends anything:
 * - `system`: a certificate the system's CAs vouch for, for the URL's host name;
 * - `ca`: one signed by the given CA (a PEM file's text), for the URL's host name;
 * - `pinned`: exactly the certificate whose SHA-256 fingerprint was pinned for this URL (trust on
 *   first use, or `--fingerprint`). The pin binds the URL to one certificate, which is more than a
 *   host name check: no other certificate passes, whatever names it carries.
 */
export type ServerTrust =
  | { type: 'system' }
  | { type: 'ca'; ca: string }
  | { type: 'pinned'; fingerprint256: string; cert: string };

/** The TLS options of a connection under a trust: what `ws` and `https.request` take. */
export type TrustTlsOptions = {
  ca?: string;
  checkServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
  rejectUnauthorized: true;
};

/** `AB:CD:…` in upper case, the form `X509Certificate.fingerprint256` and `molf server` print. */
export function normalizeFingerprint(fingerprint: string): string {
  const hex = fingerprint
    .trim()
    .replace(/^sha-?256[:=]?/i, '')
    .replace(/[^0-9a-f]/gi, '')
    .toUpperCase();
  return hex.match(/.{2}/g)?.join(':') ?? '';
}

/** Whether a text is a SHA-256 fingerprint: 32 bytes of hex, with or without colons. */
export function isFingerprint(text: string): boolean {
  return /^(sha-?256[:=]?)?\s*([0-9a-f]{2}:?){31}[0-9a-f]{2}\s*$/i.test(text.trim());
}

/** The error a pinned connection fails with when the server shows another certificate. */
export class CertificateMismatchError extends Error {
  readonly code = 'ERR_MOLF_CERT_MISMATCH';
  readonly expected: string;
  readonly actual: string;
  constructor(expected: string, actual: string) {
    super(`the server's certificate (SHA-256 ${actual}) is not the pinned one (SHA-256 ${expected})`);
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * The TLS options that make a connection fail in its handshake, before any byte of the request is
 * sent, unless the server is the trusted one. A pinned certificate is its own trust anchor (it is
 * self-signed) and its fingerprint is compared instead of its names.
 */
export function tlsOptionsFor(trust: ServerTrust): TrustTlsOptions {
  switch (trust.type) {
    case 'system':
      return { rejectUnauthorized: true };
    case 'ca':
      return { ca: trust.ca, rejectUnauthorized: true };
    case 'pinned': {
      const expected = normalizeFingerprint(trust.fingerprint256);
      return {
        ca: trust.cert,
        rejectUnauthorized: true,
        checkServerIdentity: (_host, cert) => {
          const actual = normalizeFingerprint(cert.fingerprint256 ?? '');
          return actual === expected ? undefined : new CertificateMismatchError(expected, actual);
        },
      };
    }
    default:
      return trust satisfies never;
  }
}
