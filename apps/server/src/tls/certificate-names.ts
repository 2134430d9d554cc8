import { isIP } from 'node:net';
import { hostname } from 'node:os';

/** Hosts that mean "every address": they name no address a certificate could carry. */
const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::', '[::]']);

/**
 * A host name as DNS knows it: dot-separated labels of letters, digits and inner hyphens (1–63
 * characters each, 253 in all), an optional `*.` first label (a wildcard name), and a last label
 * that is not all digits, so a mistyped address (`192.168.1.300`) is not taken for a name.
 */
export function isDnsName(text: string): boolean {
  const name = text.endsWith('.') ? text.slice(0, -1) : text;
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  const label = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
  const valid = labels.every((part, index) => (index === 0 && part === '*' && labels.length > 1) || label.test(part));
  return valid && !/^\d+$/.test(labels.at(-1) ?? '');
}

/**
 * One name a certificate is for (`--tls-san`): an IP address (v4 or v6, brackets allowed) or a DNS
 * name, in the form it is written into the certificate; a result with the reason when it is neither.
 */
export function safeParseCertificateName(text: string): { ok: true; value: string } | { ok: false; error: string } {
  const trimmed = text.trim();
  const unbracketed = /^\[(.*)\]$/.exec(trimmed)?.[1] ?? trimmed;
  if (isIP(unbracketed) !== 0) return { ok: true, value: unbracketed };
  if (isDnsName(trimmed)) return { ok: true, value: trimmed.replace(/\.$/, '').toLowerCase() };
  return {
    ok: false,
    error: `"${text}" is neither an IP address nor a host name (letters, digits, hyphens and dots, e.g. molf.example.org)`,
  };
}

export type CertificateNamesOptions = {
  /** The address the server listens on; named in the certificate when it is a specific one. */
  host: string;
  /** More names, already validated (`--tls-san`). Default none. */
  extraNames?: readonly string[];
  /** This machine's host name. Default `os.hostname()`; left out when it is not a valid DNS name. */
  machineName?: string;
};

/**
 * The names a generated certificate carries: `localhost`, `127.0.0.1`, `::1`, the machine's host
 * name, the listen address unless it is a wildcard (`0.0.0.0`, `::`), and the extra names.
 */
export function defaultCertificateNames(options: CertificateNamesOptions): string[] {
  const names = ['localhost', '127.0.0.1', '::1'];
  const machine = options.machineName ?? hostname();
  if (isDnsName(machine)) names.push(machine.toLowerCase());
  if (!WILDCARD_HOSTS.has(options.host)) {
    const parsed = safeParseCertificateName(options.host);
    if (parsed.ok) names.push(parsed.value);
  }
  names.push(...(options.extraNames ?? []));
  return [...new Set(names)];
}
