/** What a person compares with what a client shows: fingerprint, end and names of a certificate. */
export type CertificateSummary = { fingerprint256: string; validTo: Date; names: readonly string[] };

/** `YYYY-MM-DD` of a date, in UTC. */
function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** The start-up lines of a TLS server: the fingerprint, then its end and names. */
export function formatCertificateLines(certificate: CertificateSummary & { created: boolean }): string[] {
  return [
    `TLS certificate${certificate.created ? ' (made now)' : ''}: SHA-256 ${certificate.fingerprint256}`,
    `  expires ${day(certificate.validTo)}, for ${certificate.names.join(', ')}; ` +
      'a client asked to trust this server shows this fingerprint: they must match',
  ];
}

/** What `--renew-cert` tells: the new fingerprint is above, and every client must trust it again. */
export function formatRenewalNotice(options: { certFile: string; host: string; port: number }): string {
  const { host, port } = options;
  const everywhere = host === '0.0.0.0' || host === '::' || host === '';
  const url = everywhere
    ? `wss://ADDRESS:${port}`
    : `wss://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
  return (
    `The TLS certificate was renewed (the previous one is kept as ${options.certFile}.old). ` +
    `Clients that trusted the previous one now refuse this server: on each, run \`molf trust ${url} --forget\`` +
    `${everywhere ? ' (ADDRESS: the one that client uses)' : ''}, then connect again and compare the fingerprint above`
  );
}

/** `molf server --print-fingerprint`: the fingerprint alone on the first line (for scripts), then the rest. */
export function formatFingerprintReport(certificate: CertificateSummary & { certFile: string }): string {
  return (
    `${certificate.fingerprint256}\n` +
    `SHA-256 of ${certificate.certFile}, expires ${day(certificate.validTo)}, for ${certificate.names.join(', ')}\n`
  );
}
