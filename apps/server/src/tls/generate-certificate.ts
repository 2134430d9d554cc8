import { randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';

/** A certificate and its private key, both PEM. */
export type CertificatePair = { cert: string; key: string };

export type GenerateCertificateOptions = {
  /** Host names and IP addresses the certificate is for (its subject alternative names). */
  names: readonly string[];
  /** How long it is valid from now. Default 365 days. */
  days?: number;
  /** The subject's common name. Default `molf-server`. */
  commonName?: string;
  /** The clock, for tests. Default `Date.now`. */
  now?: () => number;
};

const DAY_MS = 86_400_000;
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/**
 * A self-signed EC P-256 certificate for a server, made in process with `@peculiar/x509` over
 * Node's WebCrypto (no `openssl` subprocess). The library is loaded only here, when a certificate
 * is made (first start, `--renew-cert`), so a running server never holds it; it needs the
 * `reflect-metadata` polyfill, loaded first.
 */
export async function generateCertificate(options: GenerateCertificateOptions): Promise<CertificatePair> {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const now = options.now?.() ?? Date.now();
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const names = [...new Set(options.names)];
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    // 16 random bytes, the top bit cleared so the serial is positive (RFC 5280 §4.1.2.2).
    serialNumber: positiveSerial(),
    name: `CN=${options.commonName ?? 'molf-server'}`,
    // A minute back, so a peer whose clock is a little behind does not see a certificate from the future.
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + (options.days ?? 365) * DAY_MS),
    keys: keys as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'],
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        names.map((name) => (isIP(name) === 0 ? { type: 'dns', value: name } : { type: 'ip', value: name })),
      ),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', (keys as webcrypto.CryptoKeyPair).privateKey);
  return { cert: cert.toString('pem'), key: toPem('PRIVATE KEY', Buffer.from(pkcs8)) };
}

function positiveSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

function toPem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
