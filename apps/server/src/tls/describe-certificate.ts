import type { X509Certificate } from 'node:crypto';

/** What a person compares and what a client pins: a certificate's identity and its life. */
export type CertificateDescription = {
  /** SHA-256 of the certificate, colon-hex (`AB:CD:…`), as clients show it. */
  fingerprint256: string;
  /** Its subject alternative names, e.g. `['localhost', '127.0.0.1', '::1']`. */
  names: string[];
  validFrom: Date;
  validTo: Date;
};

export function describeCertificate(certificate: X509Certificate): CertificateDescription {
  return {
    fingerprint256: certificate.fingerprint256,
    names: parseSubjectAltNames(certificate.subjectAltName),
    validFrom: new Date(certificate.validFrom),
    validTo: new Date(certificate.validTo),
  };
}

/** `DNS:localhost, IP Address:127.0.0.1` → `['localhost', '127.0.0.1']`; other kinds are left out. */
function parseSubjectAltNames(text: string | undefined): string[] {
  if (text === undefined || text === '') return [];
  return text.split(', ').flatMap((entry) => {
    const match = /^(DNS|IP Address):(.+)$/.exec(entry);
    return match?.[2] === undefined ? [] : [match[1] === 'IP Address' ? shortenIPv6(match[2]) : match[2]];
  });
}

/** Node writes IPv6 addresses in full (`0:0:0:0:0:0:0:1`); people write `::1`. */
function shortenIPv6(address: string): string {
  if (!address.includes(':')) return address;
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}
