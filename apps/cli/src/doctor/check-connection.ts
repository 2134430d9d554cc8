import { request } from 'node:https';
import { homedir } from 'node:os';
import { type ServerTrust, tlsOptionsFor } from '@molf/client/node';
import { isMolfError } from '@molf/protocol';
import { resolveMolfPaths } from '@molf/worker/molf-paths';
import { findConnection } from '../connection-store.ts';
import { knownServers } from '../remote/known-servers.ts';
import { resolveServerTrust } from '../remote/resolve-server-trust.ts';
import { savedLogins } from '../remote/saved-logins.ts';
import type { DoctorCheck } from './doctor-check.ts';

/** How long the server's health endpoint may take to answer. */
const HEALTH_TIMEOUT_MS = 5_000;

/** The plain HTTP health endpoint beside a server's WebSocket URL (`ws://host:port` → `http://host:port/healthz`). */
export function toHealthUrl(serverUrl: string): string | undefined {
  if (!URL.canParse(serverUrl)) return undefined;
  const url = new URL(serverUrl);
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') return undefined;
  url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
  url.pathname = '/healthz';
  url.search = '';
  url.hash = '';
  return url.href;
}

type Health = { version?: unknown; workers?: { online?: unknown; known?: unknown } };

function describeHealth(health: Health): string {
  const { online, known } = health.workers ?? {};
  const workers =
    typeof online === 'number' && typeof known === 'number' ? `, ${online} of ${known} workers online` : '';
  return `answers (server ${typeof health.version === 'string' ? health.version : 'of unknown version'}${workers})`;
}

/** Why a fetch failed, in a few words: the error code of its cause (`ECONNREFUSED`) when it has one. */
function describeFailure(error: unknown): string {
  if ((error as Error).name === 'TimeoutError') return `no answer within ${HEALTH_TIMEOUT_MS / 1000} s`;
  // fetch puts the socket's error in `cause`; https.request gives it directly.
  const failure = error as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof failure.code === 'string' ? failure.code : failure.cause?.code;
  if (typeof code === 'string') return code === 'ECONNREFUSED' ? 'connection refused' : code;
  return (error as Error).message;
}

/**
 * The server client commands run here would use: `MOLF_SERVER_URL`, else the connection `molf up`
 * saved for this directory (or an ancestor), else the default server of `molf login`; whether it
 * answers on its health endpoint, which needs no token. A `wss://` server is verified as a client
 * command would (its pin, a CA, the system's CAs; nobody is asked here), and a certificate near its
 * end is a warning. None saved is fine: `molf run` and `molf chat` then start their own.
 */
export async function checkConnection(options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<DoctorCheck> {
  const { env } = options;
  const clientDir = resolveMolfPaths({ env, home: homedir() }).clientDir;
  const fromEnv = env.MOLF_SERVER_URL;
  const saved = fromEnv === undefined || fromEnv === '' ? await findConnection(options.cwd, env) : undefined;
  const login =
    (fromEnv === undefined || fromEnv === '') && saved === undefined
      ? await savedLogins(clientDir)
          .defaultLogin()
          .catch(() => undefined)
      : undefined;
  if ((fromEnv === undefined || fromEnv === '') && saved === undefined && login === undefined) {
    return {
      id: 'connection',
      status: 'skipped',
      summary: `no saved connection for ${options.cwd}: molf run and molf chat start their own server (molf up saves one)`,
    };
  }
  const url = saved?.url ?? login?.url ?? (fromEnv as string);
  const where =
    saved !== undefined
      ? `saved by molf up for ${saved.projectDir} in ${saved.file}`
      : login !== undefined
        ? 'the default of molf login'
        : 'MOLF_SERVER_URL';
  const restart =
    saved !== undefined
      ? `start it again: run \`molf up\` in ${saved.projectDir}`
      : login !== undefined
        ? 'start the server, or log in to another (molf login URL)'
        : 'start the server, or unset MOLF_SERVER_URL';
  const health = toHealthUrl(url);
  if (health === undefined) {
    return {
      id: 'connection',
      status: 'error',
      summary: `server ${url} (${where}) is not a ws:// or wss:// URL`,
      fix: saved === undefined ? 'set MOLF_SERVER_URL to ws://host:port' : `run \`molf up\` in ${saved.projectDir}`,
    };
  }
  const notes: string[] = [];
  let trust: ServerTrust | undefined;
  try {
    trust = await resolveServerTrust({
      url,
      store: knownServers(clientDir),
      caFile: env.MOLF_TLS_CA,
      fingerprint: env.MOLF_SERVER_FINGERPRINT,
      tell: (line) => notes.push(line),
    });
  } catch (error) {
    return {
      id: 'connection',
      status: 'error',
      summary: `server ${url} (${where}): ${isMolfError(error) ? error.message.split('\n')[0] : String(error)}`,
      fix: `check the fingerprint on the server (molf server --print-fingerprint), then: molf trust ${url}`,
    };
  }
  try {
    const answer = await getHealth(health, trust);
    if (answer.status !== 200) {
      return {
        id: 'connection',
        status: 'error',
        summary: `server ${url} (${where}): ${health} answers HTTP ${answer.status}, not a Molf server's health`,
        fix: restart,
      };
    }
    const summary = `server ${url} (${where}) ${describeHealth(answer.body as Health)}`;
    const expiring = notes.find((line) => line.includes('expire'));
    return expiring === undefined
      ? { id: 'connection', status: 'ok', summary }
      : {
          id: 'connection',
          status: 'warning',
          summary: `${summary}; ${expiring}`,
          fix: 'molf server --renew-cert on the server',
        };
  } catch (error) {
    return {
      id: 'connection',
      status: 'error',
      summary: `server ${url} (${where}) does not answer: ${describeFailure(error)}`,
      fix: restart,
    };
  }
}

/** `GET /healthz`: with fetch over plain HTTP, over HTTPS with the server's trust (fetch takes no CA). */
async function getHealth(health: string, trust: ServerTrust | undefined): Promise<{ status: number; body: unknown }> {
  if (!health.startsWith('https:')) {
    const response = await fetch(health, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    return { status: response.status, body: response.ok ? await response.json() : undefined };
  }
  return new Promise((resolve, reject) => {
    const outgoing = request(
      health,
      { timeout: HEALTH_TIMEOUT_MS, ...(trust === undefined ? {} : tlsOptionsFor(trust)) },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch {
            resolve({ status: response.statusCode ?? 0, body: undefined });
          }
        });
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })));
    outgoing.on('error', reject);
    outgoing.end();
  });
}
