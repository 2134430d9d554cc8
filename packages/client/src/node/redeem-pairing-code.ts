import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type ErrorCode, ErrorCodeSchema, type Kind, MolfError, type Role, RoleSchema } from '@molf/protocol';
import { describeTlsRefusal } from './describe-tls-refusal.ts';
import { type ServerTrust, tlsOptionsFor } from './server-trust.ts';

export type RedeemedCredential = { token: string; role: Role; credentialId: string; name: string };

export type RedeemPairingCodeOptions = {
  /** The server's `wss://` (or, on loopback, `ws://`) URL. */
  url: string;
  code: string;
  /** What the code is redeemed for: a worker, or a person's client. */
  kind: Kind;
  /** The new credential's name (`laptop`, `build-box`), unless the code carries one. */
  name: string;
  /** How the server is verified before the code is sent. Default: the system's CAs. */
  trust?: ServerTrust;
  timeoutMs?: number;
};

/** The HTTP address of a server's WebSocket URL: `wss://h:p` → `https://h:p`. */
export function httpUrlOf(url: string): URL {
  const parsed = new URL(url);
  if (parsed.protocol === 'wss:') parsed.protocol = 'https:';
  else if (parsed.protocol === 'ws:') parsed.protocol = 'http:';
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new MolfError('invalid_input', `${url} is not a server URL: use wss://HOST:PORT`, { field: 'url' });
  }
  return parsed;
}

/**
 * Trades a pairing code for a named credential (`POST /api/pair`). Over `wss://` the server is
 * verified in the TLS handshake before the code leaves; its refusals (wrong, expired or used code,
 * rate limit) come back as `MolfError`s with the server's sentence.
 */
export function redeemPairingCode(options: RedeemPairingCodeOptions): Promise<RedeemedCredential> {
  const base = httpUrlOf(options.url);
  const target = new URL('/api/pair', base);
  const body = JSON.stringify({ code: options.code, kind: options.kind, name: options.name });
  const secure = target.protocol === 'https:';
  const request = secure ? httpsRequest : httpRequest;
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise<RedeemedCredential>((resolve, reject) => {
    const outgoing = request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
        ...(secure ? (options.trust === undefined ? {} : tlsOptionsFor(options.trust)) : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > 64 * 1024) {
            response.destroy();
            reject(new MolfError('internal', 'the server answered the pairing request with too much data'));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            reject(
              new MolfError(
                status === 404 ? 'not_found' : 'internal',
                status === 404
                  ? `the server at ${options.url} does not take pairing codes (HTTP 404): is it a Molf server, and new enough?`
                  : `the server answered the pairing request with HTTP ${status} and no Molf answer`,
              ),
            );
            return;
          }
          if (status === 200) {
            const credential = toCredential(parsed);
            if (credential === undefined) {
              reject(new MolfError('internal', 'the server answered the pairing request without a credential'));
            } else {
              resolve(credential);
            }
            return;
          }
          reject(toError(parsed, status, response.headers['retry-after']));
        });
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => {
      outgoing.destroy(new MolfError('timeout', `the server at ${options.url} did not answer within ${timeoutMs} ms`));
    });
    outgoing.on('error', (error) => {
      const refusal = describeTlsRefusal(error, {
        url: options.url,
        ...(options.trust === undefined ? {} : { trust: options.trust }),
      });
      reject(refusal === undefined ? error : new MolfError('server_untrusted', refusal, { cause: error }));
    });
    outgoing.end(body);
  });
}

function toCredential(value: unknown): RedeemedCredential | undefined {
  const { token, role, credentialId, name } = (value ?? {}) as Record<string, unknown>;
  const parsedRole = RoleSchema.safeParse(role);
  if (typeof token !== 'string' || token === '' || !parsedRole.success) return undefined;
  if (typeof credentialId !== 'string' || typeof name !== 'string') return undefined;
  return { token, role: parsedRole.data, credentialId, name };
}

function toError(value: unknown, status: number, retryAfter: string | undefined): MolfError {
  const error = ((value ?? {}) as { error?: { code?: unknown; message?: unknown } }).error;
  const code = ErrorCodeSchema.safeParse(error?.code);
  const fallback: ErrorCode = status === 429 ? 'busy' : status === 401 ? 'unauthorized' : 'internal';
  const message = typeof error?.message === 'string' ? error.message : `the server refused the code (HTTP ${status})`;
  const wait = status === 429 && retryAfter !== undefined ? ` (try again in ${retryAfter} s)` : '';
  return new MolfError(code.success ? code.data : fallback, `${message}${wait}`);
}
