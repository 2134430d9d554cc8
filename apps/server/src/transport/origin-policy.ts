import { networkInterfaces } from 'node:os';
import { MolfError } from '@molf/protocol';

/** Why a WebSocket upgrade may go ahead, or that it may not. */
export type OriginDecision = { type: 'allow'; reason: 'no_origin' | 'own' | 'configured' } | { type: 'deny' };

export type OriginPolicyOptions = {
  /** The address the server listens on, as configured (`127.0.0.1`, `0.0.0.0`, `molf.lan`…). */
  host: string;
  /** The port it listens on (the real one, after a listen on port 0). */
  port: number;
  /** Further origins browsers may connect from, `http(s)://host[:port]`. Default none. */
  allowedOrigins?: readonly string[];
  /**
   * This machine's addresses, the own origins of a server listening on all of them.
   * Default: the addresses of `os.networkInterfaces()` when the policy is created.
   */
  interfaceAddresses?: readonly string[];
};

const ORIGIN_FORMAT = 'an origin is http(s)://host[:port], with no path';
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];
const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::', '[::]']);

/**
 * Parses an origin as browsers send it and as people write it (`https://App.example:443/`) into
 * the form browsers send (`https://app.example`), so that comparing strings compares origins.
 */
export function safeParseOrigin(text: string): { ok: true; value: string } | { ok: false; error: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, error: `"${text}" is not an origin: ${ORIGIN_FORMAT}` };
  }
  const bare =
    url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !bare || text.endsWith('#') || text.endsWith('?')) {
    return { ok: false, error: `"${text}" is not an origin: ${ORIGIN_FORMAT}` };
  }
  return { ok: true, value: url.origin };
}

/** Normalises configured origins; throws `config_invalid` naming the first that is not one. */
export function parseOrigins(origins: readonly string[]): string[] {
  return origins.map((text) => {
    const parsed = safeParseOrigin(text);
    if (!parsed.ok) throw new MolfError('config_invalid', `allowed origins: ${parsed.error}`);
    return parsed.value;
  });
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A host as it appears in a URL: IPv6 addresses in brackets. */
function toUrlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function defaultInterfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((addresses) =>
    // Link-local IPv6 addresses need a zone, which origins cannot carry.
    (addresses ?? []).filter((address) => !address.address.startsWith('fe80:')).map((address) => address.address),
  );
}

/**
 * Decides whether a WebSocket upgrade with this `Origin` header may proceed. A request without
 * one is not from a browser page (the CLI and the worker send none) and is judged by its token
 * alone; a browser page may connect only from the server's own origin or a configured one.
 *
 * "Own" is computed from the address the server listens on, never from the request's `Host`
 * header: a DNS-rebinding page at `http://evil.example:7600` that resolves to 127.0.0.1 sends
 * `Host: evil.example:7600`, and trusting it would make every such page "own".
 */
export function createOriginPolicy(options: OriginPolicyOptions): (origin: string | undefined) => OriginDecision {
  const configured = new Set(parseOrigins(options.allowedOrigins ?? []));

  const hosts = new Set<string>();
  if (WILDCARD_HOSTS.has(options.host)) {
    for (const name of LOOPBACK_NAMES) hosts.add(name);
    for (const address of options.interfaceAddresses ?? defaultInterfaceAddresses()) hosts.add(toUrlHost(address));
  } else {
    hosts.add(toUrlHost(options.host));
    if (isLoopback(options.host)) for (const name of LOOPBACK_NAMES) hosts.add(name);
  }
  const own = new Set<string>();
  for (const host of hosts) {
    for (const scheme of ['http', 'https']) {
      const parsed = safeParseOrigin(`${scheme}://${host}:${options.port}`);
      if (parsed.ok) own.add(parsed.value);
    }
  }

  return (origin) => {
    if (origin === undefined) return { type: 'allow', reason: 'no_origin' };
    const parsed = safeParseOrigin(origin);
    if (!parsed.ok) return { type: 'deny' };
    if (own.has(parsed.value)) return { type: 'allow', reason: 'own' };
    if (configured.has(parsed.value)) return { type: 'allow', reason: 'configured' };
    return { type: 'deny' };
  };
}
