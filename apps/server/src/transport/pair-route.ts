import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Logger } from '@molf/logging';
import { type ErrorCode, isMolfError, kindOf, PairRequestSchema, type PairResponse, type Role } from '@molf/protocol';
import { CREDENTIALS_FILE } from '../auth/credential-store.ts';
import {
  formatPairingCode,
  formatWait,
  PAIRING_CODES_FILE,
  type PairingCodeStore,
  type RedemptionLimiter,
  safeParsePairingCode,
  toAddressKey,
} from '../pairing/index.ts';
import type { HttpRoute } from './handle-http.ts';
import { readBoundedText } from './read-bounded-text.ts';

export const PAIR_PATH = '/api/pair';
/** `{ code, kind, name }` fits in far less. */
const MAX_BODY_BYTES = 4_096;
/**
 * Redemptions are checked one at a time (each holds the codes file's lock and one scrypt), so that
 * the limits count each failure before the next attempt is looked at; this many may wait their turn.
 */
const MAX_WAITING = 32;

type Refusal = { status: number; code: ErrorCode; message: string; field?: string; headers?: Record<string, string> };

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response
    .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers })
    .end(JSON.stringify(body));
}

function refuse(response: ServerResponse, refusal: Refusal): void {
  const { status, headers, ...error } = refusal;
  send(response, status, { error }, headers);
}

/** The URL the peer reached this server by, for the command a message tells it to run. */
function urlSeenBy(request: IncomingMessage): string {
  const host = request.headers.host ?? '';
  const scheme = (request.socket as Partial<TLSSocket>).encrypted === true ? 'wss' : 'ws';
  return /^[A-Za-z0-9.:[\]-]{1,300}$/.test(host) ? `${scheme}://${host}` : 'wss://SERVER:7600';
}

/** What the peer hears of a failure on the server's side: the file's name, never its path. */
function toFailure(error: unknown): Refusal {
  if (isMolfError(error) && error.code === 'busy') {
    return {
      status: 503,
      code: 'busy',
      message: 'the server is busy with its pairing codes: try again',
      headers: { 'retry-after': '2' },
    };
  }
  const file = isMolfError(error)
    ? [PAIRING_CODES_FILE, CREDENTIALS_FILE].find((name) => error.message.includes(name))
    : undefined;
  return {
    status: 500,
    code: 'internal',
    message:
      file === undefined
        ? 'the server could not pair: its log says why'
        : `the server's ${file} is damaged: nobody can pair until the server's admin mends or removes it (the server's log says how)`,
  };
}

function wrongKind(role: Role, code: string, url: string): string {
  const shown = formatPairingCode(code);
  return kindOf(role) === 'worker'
    ? `this pairing code is for a worker, not a client: on the worker's machine run \`molf worker --server ${url} --pair ${shown}\`. The code is still valid`
    : `this pairing code is for a client (role ${role}), not a worker: run \`molf login ${url} --pair ${shown}\`. The code is still valid`;
}

/**
 * `POST /api/pair`: trades a pairing code for a credential. Body `{ code, kind, name }` (JSON, at
 * most 4 KiB); answers 200 `{ token, role, credentialId, name }`, else
 * `{ error: { code, message, field? } }`: 400 `invalid_input`, 401 `unauthorized` (a wrong,
 * expired, used or cancelled code, each said), 409 `conflict` (a worker's code redeemed by a
 * client or the reverse: the code stays live), 429 `busy` with `Retry-After` (rate limits, see
 * `PAIRING_LIMITS`), 413, 415, 500. Codes and tokens are never logged.
 */
export function createPairRoute(options: {
  pairing: PairingCodeStore;
  limiter: RedemptionLimiter;
  logger: Logger;
}): HttpRoute {
  const { pairing, limiter, logger } = options;
  let tail: Promise<unknown> = Promise.resolve();
  let waiting = 0;

  /** Runs `task` after the redemptions before it. */
  function inTurn<T>(task: () => Promise<T>): Promise<T> {
    const run = tail.then(task, task);
    tail = run.catch(() => {});
    return run;
  }

  async function redeem(request: IncomingMessage, input: { code: string; kind: 'client' | 'worker'; name: string }) {
    const remoteAddress = request.socket.remoteAddress;
    const address = toAddressKey(remoteAddress);
    const check = limiter.check(address);
    if (check.type === 'refuse') {
      const wait = formatWait(check.retryAfterMs);
      return {
        status: 429,
        code: 'busy',
        message:
          check.scope === 'address'
            ? `too many wrong pairing codes from this address: try again in ${wait}`
            : `too many wrong pairing codes were tried on this server in the last minute: pairing is paused; try again in ${wait}`,
        headers: { 'retry-after': String(Math.ceil(check.retryAfterMs / 1000)) },
      } satisfies Refusal;
    }
    const parsed = safeParsePairingCode(input.code);
    if (!parsed.ok) {
      limiter.fail(address);
      return { status: 400, code: 'invalid_input', field: 'code', message: parsed.error } satisfies Refusal;
    }
    const result = await pairing.redeem({ code: parsed.value, kind: input.kind, name: input.name });
    const makeAnother = 'make a new one on the server with `molf pair --role ROLE`';
    switch (result.type) {
      case 'paired': {
        logger.info(
          { remoteAddress, credentialId: result.credential.id, role: result.credential.role },
          'pairing: a code became a credential',
        );
        const body: PairResponse = {
          token: result.token,
          role: result.credential.role,
          credentialId: result.credential.id,
          name: result.credential.label,
        };
        return body;
      }
      case 'unknown':
        limiter.fail(address);
        logger.info({ remoteAddress }, 'pairing: a wrong code was tried');
        return {
          status: 401,
          code: 'unauthorized',
          message: `this pairing code is not valid: check what was typed, or ${makeAnother}`,
        } satisfies Refusal;
      case 'expired':
        limiter.fail(address);
        return {
          status: 401,
          code: 'unauthorized',
          message: `this pairing code expired at ${result.expiredAt} (a code lasts 5 minutes): ${makeAnother}`,
        } satisfies Refusal;
      case 'used':
        limiter.fail(address);
        return {
          status: 401,
          code: 'unauthorized',
          message: `this pairing code was already used (at ${result.usedAt}), and a code pairs once: ${makeAnother}`,
        } satisfies Refusal;
      case 'cancelled':
        limiter.fail(address);
        return {
          status: 401,
          code: 'unauthorized',
          message: `this pairing code was cancelled on the server (at ${result.cancelledAt}): ${makeAnother}`,
        } satisfies Refusal;
      case 'wrong_kind':
        return {
          status: 409,
          code: 'conflict',
          message: wrongKind(result.role, parsed.value, urlSeenBy(request)),
        } satisfies Refusal;
      default:
        return result satisfies never;
    }
  }

  return {
    matches: (path) => path === PAIR_PATH,
    async handle(request, response) {
      if (request.method !== 'POST') {
        refuse(response, {
          status: 405,
          code: 'invalid_input',
          message: 'POST a JSON body { "code", "kind", "name" } to pair',
          headers: { allow: 'POST' },
        });
        return;
      }
      if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
        refuse(response, {
          status: 415,
          code: 'invalid_input',
          field: 'content-type',
          message: 'send the pairing request as JSON, with content-type application/json',
        });
        return;
      }
      const text = await readBoundedText(request, MAX_BODY_BYTES);
      if (text === undefined) {
        refuse(response, {
          status: 413,
          code: 'too_large',
          message: `a pairing request has at most ${MAX_BODY_BYTES} bytes`,
          headers: { connection: 'close' },
        });
        return;
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        refuse(response, { status: 400, code: 'invalid_input', message: 'the pairing request is not valid JSON' });
        return;
      }
      const input = PairRequestSchema.safeParse(json);
      if (!input.success) {
        const issue = input.error.issues[0];
        const field = issue?.path.map(String).join('.') ?? '';
        refuse(response, {
          status: 400,
          code: 'invalid_input',
          ...(field === '' ? {} : { field }),
          message: `invalid ${field === '' ? 'pairing request' : field}: ${issue?.message ?? 'not as expected'}`,
        });
        return;
      }
      if (waiting >= MAX_WAITING) {
        refuse(response, {
          status: 429,
          code: 'busy',
          message: 'too many pairing requests at once: try again in a few seconds',
          headers: { 'retry-after': '5' },
        });
        return;
      }
      waiting += 1;
      let answer: Awaited<ReturnType<typeof redeem>>;
      try {
        answer = await inTurn(() => redeem(request, input.data));
      } catch (error) {
        logger.error({ err: error, remoteAddress: request.socket.remoteAddress }, 'pairing: a redemption failed');
        refuse(response, toFailure(error));
        return;
      } finally {
        waiting -= 1;
      }
      if ('status' in answer) refuse(response, answer);
      else send(response, 200, answer);
    },
  };
}
