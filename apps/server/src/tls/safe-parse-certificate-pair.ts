import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----/;
const PEM_PRIVATE_KEY = /-----BEGIN (?:[A-Z0-9]+ )?PRIVATE KEY-----/;
/** PKCS #8 `ENCRYPTED PRIVATE KEY`, or OpenSSL's traditional form with its `Proc-Type` header. */
const PEM_ENCRYPTED_KEY = /-----BEGIN ENCRYPTED PRIVATE KEY-----|^Proc-Type: 4,ENCRYPTED/m;

export type CertificatePairFiles = {
  /** The certificate's PEM text (a chain may follow it) and where it was read. */
  cert: { text: string; file: string };
  /** The private key's PEM text and where it was read. */
  key: { text: string; file: string };
};

/**
 * A PEM certificate and private key that belong together, or why they do not: a file that is not
 * PEM, one PEM cannot parse, an encrypted key, a key that is not the certificate's. Each reason
 * names the file.
 */
export function safeParseCertificatePair(
  files: CertificatePairFiles,
): { ok: true; value: X509Certificate } | { ok: false; error: string } {
  const { cert, key } = files;
  if (!PEM_CERTIFICATE.test(cert.text)) {
    return { ok: false, error: `${cert.file} is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" line)` };
  }
  if (!PEM_PRIVATE_KEY.test(key.text)) {
    return { ok: false, error: `${key.file} is not a PEM private key (no "-----BEGIN … PRIVATE KEY-----" line)` };
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert.text);
  } catch (error) {
    return { ok: false, error: `${cert.file} holds no readable certificate: ${(error as Error).message}` };
  }
  // Told by the PEM itself: without a passphrase OpenSSL 3 fails with "interrupted or cancelled",
  // not Node's ERR_MISSING_PASSPHRASE.
  if (PEM_ENCRYPTED_KEY.test(key.text)) {
    return {
      ok: false,
      error: `${key.file} is encrypted: give the key without a passphrase (e.g. \`openssl pkey -in ${key.file} -out key.pem\`)`,
    };
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key.text);
  } catch (error) {
    return { ok: false, error: `${key.file} holds no readable private key: ${(error as Error).message}` };
  }
  let matches: boolean;
  try {
    matches = certificate.checkPrivateKey(privateKey);
  } catch {
    // A key of another kind than the certificate's (RSA against EC) is refused by throwing.
    matches = false;
  }
  if (!matches) {
    return { ok: false, error: `the key ${key.file} does not belong to the certificate ${cert.file}` };
  }
  return { ok: true, value: certificate };
}
