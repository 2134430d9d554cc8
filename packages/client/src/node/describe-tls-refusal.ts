import type { PeerCertificate } from 'node:tls';
import { CertificateMismatchError, normalizeFingerprint, type ServerTrust } from './server-trust.ts';

/** OpenSSL's reasons for not trusting a certificate's issuer: nobody this client trusts vouches for it. */
const UNKNOWN_ISSUER = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
]);

/** OpenSSL's other certificate verification failures (`X509_V_ERR_*`), as Node names them in `error.code`. */
const CERTIFICATE_REFUSED = new Set([
  'CERT_SIGNATURE_FAILURE',
  'CERT_REJECTED',
  'CERT_REVOKED',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'HOSTNAME_MISMATCH',
]);

/**
 * Why this client refused a server in the TLS handshake, for a person: what was wrong, that
 * nothing was sent, and what to do. Undefined for an error that is not such a refusal (nothing
 * listens, a reset, a timeout), which callers report as they did. Under a pin, another
 * certificate usually fails as one nobody vouches for (the pin is the only trust anchor), and is
 * said to be not the pinned one; the one shown is named when the error carries it.
 */
export function describeTlsRefusal(error: unknown, options: { url: string; trust?: ServerTrust }): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const server = originOf(options.url);
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (options.trust?.type === 'pinned' && (error instanceof CertificateMismatchError || UNKNOWN_ISSUER.has(code))) {
    const shown = error instanceof CertificateMismatchError ? error.actual : undefined;
    return (
      `the server at ${server} shows a certificate that is not the pinned one ` +
      `(pinned: SHA-256 ${normalizeFingerprint(options.trust.fingerprint256)}${shown === undefined ? '' : `; shown: SHA-256 ${shown}`}). ` +
      'Nothing was sent. Either someone is in the middle, or the server has a new certificate ' +
      '(`molf server --renew-cert`, a new data dir). If it is new, check the fingerprint on the server ' +
      `(\`molf server --print-fingerprint\`) and pin it: \`molf trust ${server} --fingerprint ${shown ?? 'NEW'}\`.`
    );
  }
  const details = error as NodeJS.ErrnoException & { host?: string; cert?: PeerCertificate };
  const reason = describeCertificateProblem({
    code,
    message: error.message,
    ...(details.host === undefined ? {} : { host: details.host }),
    ...(details.cert?.subjectaltname === undefined ? {} : { names: details.cert.subjectaltname }),
    ...(options.trust === undefined ? {} : { trust: options.trust }),
  });
  return reason === undefined
    ? undefined
    : `the server at ${server} was refused in the TLS handshake (nothing was sent): ${reason}`;
}

/**
 * What is wrong with a server's certificate, from OpenSSL's or Node's code for it
 * (`CERT_HAS_EXPIRED`, `ERR_TLS_CERT_ALTNAME_INVALID`…), with what to do; undefined for a code
 * that is not about the certificate.
 */
export function describeCertificateProblem(problem: {
  code: string;
  /** The error's own words, for the rarer codes. */
  message?: string;
  /** The host name the certificate was checked for. */
  host?: string;
  /** The certificate's names, `DNS:localhost, IP Address:127.0.0.1`. */
  names?: string;
  trust?: ServerTrust;
}): string | undefined {
  const { code, trust } = problem;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = problem.names;
    return (
      `its certificate is not for ${problem.host ?? 'this host'} (it names ${names === undefined || names === '' ? 'no host' : names}): ` +
      'use an address it names, or give the server a certificate for this one (`molf server --tls-san NAME --renew-cert`)'
    );
  }
  if (code === 'CERT_HAS_EXPIRED') {
    return `its certificate has expired: renew it on the server (\`molf server --renew-cert\`${trust?.type === 'pinned' ? '), then pin the new one' : ')'}`;
  }
  if (code === 'CERT_NOT_YET_VALID') {
    return "its certificate is not valid yet: check this machine's clock and the server's";
  }
  if (UNKNOWN_ISSUER.has(code)) {
    return trust?.type === 'ca'
      ? `its certificate is not signed by the CA given (${code})`
      : `its certificate is not signed by a CA this client trusts (${code}): give the CA that signed it (--tls-ca FILE), or pin the certificate (molf trust)`;
  }
  if (CERTIFICATE_REFUSED.has(code))
    return `its certificate was refused (${code}${problem.message === undefined ? '' : `: ${problem.message}`})`;
  return undefined;
}

/** `wss://host:port` of a URL, without its path; the URL itself when it does not parse. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
