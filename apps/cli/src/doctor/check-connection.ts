import { findConnection } from '../connection-store.ts';
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
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code === 'ECONNREFUSED' ? 'connection refused' : cause.code;
  return (error as Error).message;
}

/**
 * The server client commands run here would use: `MOLF_SERVER_URL`, else the connection `molf up`
 * saved for this directory (or an ancestor); whether it answers on its health endpoint, which needs
 * no token. None saved is fine: `molf run` and `molf chat` then start their own.
 */
export async function checkConnection(options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<DoctorCheck> {
  const fromEnv = options.env.MOLF_SERVER_URL;
  const saved = fromEnv === undefined || fromEnv === '' ? await findConnection(options.cwd, options.env) : undefined;
  if ((fromEnv === undefined || fromEnv === '') && saved === undefined) {
    return {
      id: 'connection',
      status: 'skipped',
      summary: `no saved connection for ${options.cwd}: molf run and molf chat start their own server (molf up saves one)`,
    };
  }
  const url = saved?.url ?? (fromEnv as string);
  const where = saved === undefined ? 'MOLF_SERVER_URL' : `saved by molf up for ${saved.projectDir} in ${saved.file}`;
  const restart =
    saved === undefined
      ? 'start the server, or unset MOLF_SERVER_URL'
      : `start it again: run \`molf up\` in ${saved.projectDir}`;
  const health = toHealthUrl(url);
  if (health === undefined) {
    return {
      id: 'connection',
      status: 'error',
      summary: `server ${url} (${where}) is not a ws:// or wss:// URL`,
      fix: saved === undefined ? 'set MOLF_SERVER_URL to ws://host:port' : `run \`molf up\` in ${saved.projectDir}`,
    };
  }
  try {
    const response = await fetch(health, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    if (!response.ok) {
      return {
        id: 'connection',
        status: 'error',
        summary: `server ${url} (${where}): ${health} answers HTTP ${response.status}, not a Molf server's health`,
        fix: restart,
      };
    }
    return {
      id: 'connection',
      status: 'ok',
      summary: `server ${url} (${where}) ${describeHealth((await response.json()) as Health)}`,
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
