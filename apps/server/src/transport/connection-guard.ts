import type { IncomingMessage } from 'node:http';
import type { Logger } from '@molf/logging';
import type { WebSocket } from 'ws';
import type { CredentialStore } from '../auth/credential-store.ts';
import { toAddressKey } from '../pairing/index.ts';
import { setSocketPayloadLimit } from './set-socket-payload-limit.ts';

/** An error ws raises for a peer's bad frame (too large, bad opcode, invalid UTF-8…). */
export function isWebSocketProtocolError(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown } | undefined)?.code;
  return error instanceof Error && typeof code === 'string' && code.startsWith('WS_ERR_');
}

/** Largest message a socket may send before it authenticates: the connection params are tiny. */
export const DEFAULT_PRE_AUTH_MAX_PAYLOAD_BYTES = 64 * 1024;

export type ConnectionGuardOptions = {
  credentials: CredentialStore;
  logger: Logger;
  /** A socket that has not authenticated within this time is closed. Default 10 s. */
  authTimeoutMs?: number;
  /**
   * Sockets waiting to authenticate, per address (an IPv6 address counted by its /64, an
   * IPv4-mapped one as its IPv4 address) and in all. Default 16 and 256.
   */
  maxUnauthenticated?: { perAddress?: number; total?: number };
  /** How often open connections are checked against the credentials besides the change announcements. Default 2 s. */
  credentialsPollMs?: number;
  /** How often the credentials of live connections are noted as in use. Default 60 s. */
  inUseMarkMs?: number;
  /** Largest message of an authenticated socket: the server's `maxPayloadBytes`. */
  maxPayloadBytes: number;
  /**
   * Largest message of a socket that has not authenticated; a larger one closes it (1009) before
   * its payload is buffered. Default 64 KiB.
   */
  preAuthMaxPayloadBytes?: number;
};

/**
 * Watches every socket from connection to close: bounds the ones still waiting to authenticate
 * and the size of what they may send, closes those that never do, and cuts the ones whose
 * credential is revoked.
 */
export type ConnectionGuard = {
  /** Call for each new socket; it may be refused on the spot. */
  admit(socket: WebSocket, request: IncomingMessage): void;
  /**
   * Call once a socket's credential is verified; false if the socket was refused or timed out
   * meanwhile (a closing socket still delivers frames), and must not be served. Raises the
   * socket's message limit to the normal one.
   */
  authenticated(socket: WebSocket, credentialId: string): boolean;
  close(): void;
};

export function createConnectionGuard(options: ConnectionGuardOptions): ConnectionGuard {
  const { credentials, logger } = options;
  const authTimeoutMs = options.authTimeoutMs ?? 10_000;
  const maxPerAddress = options.maxUnauthenticated?.perAddress ?? 16;
  const maxTotal = options.maxUnauthenticated?.total ?? 256;
  const preAuthMaxPayloadBytes = options.preAuthMaxPayloadBytes ?? DEFAULT_PRE_AUTH_MAX_PAYLOAD_BYTES;
  /** Sockets waiting to authenticate: the key of their address (see `toAddressKey`) and their timeout. */
  const waiting = new Map<WebSocket, { addressKey: string; timer: NodeJS.Timeout }>();
  /** Counted per address key: an IPv6 peer by its /64, which one host commonly holds whole. */
  const waitingByAddress = new Map<string, number>();
  /** Authenticated sockets and the credential each used. */
  const live = new Map<WebSocket, string>();

  function stopWaiting(socket: WebSocket): void {
    const entry = waiting.get(socket);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    waiting.delete(socket);
    const left = (waitingByAddress.get(entry.addressKey) ?? 1) - 1;
    if (left === 0) waitingByAddress.delete(entry.addressKey);
    else waitingByAddress.set(entry.addressKey, left);
  }

  function closeRevoked(): void {
    for (const [socket, credentialId] of live) {
      if (!credentials.isActive(credentialId)) {
        logger.warn({ credentialId }, 'closing a connection whose credential was revoked');
        // terminate, not close: a closing socket still delivers messages for up to 30 s.
        socket.terminate();
      }
    }
  }
  // A revocation made by this server, another process on the data dir (`molf token revoke`) or
  // another instance on the database is announced through the documents; a look every few seconds
  // catches one whose announcement was missed (a file system that drops watch events).
  const stopWatching = credentials.watch(closeRevoked);
  const poll = setInterval(closeRevoked, options.credentialsPollMs ?? 2_000);
  poll.unref();
  // A connection that lives for weeks keeps its credential's "last used" near now.
  const inUse = setInterval(() => {
    for (const credentialId of new Set(live.values())) credentials.markInUse(credentialId);
  }, options.inUseMarkMs ?? 60_000);
  inUse.unref();

  return {
    admit(socket, request) {
      const address = request.socket.remoteAddress ?? 'unknown';
      const addressKey = toAddressKey(request.socket.remoteAddress);
      if (waiting.size >= maxTotal || (waitingByAddress.get(addressKey) ?? 0) >= maxPerAddress) {
        logger.warn({ remoteAddress: address }, 'too many unauthenticated connections; refusing one');
        // terminate, not close: a peer that ignores the close frame would keep the socket for 30 s.
        socket.terminate();
        return;
      }
      try {
        // Without this, a peer with no token could make the server buffer a whole 128 MiB frame.
        setSocketPayloadLimit(socket, preAuthMaxPayloadBytes);
      } catch (error) {
        // Fail closed: serving sockets without the limit would reopen what it closes.
        logger.error({ err: error }, 'refusing a connection: cannot limit its messages before authentication');
        socket.terminate();
        return;
      }
      // ws closes the socket itself on a bad frame and then reports it here.
      socket.on('error', (error) => {
        if (!isWebSocketProtocolError(error)) return;
        if (waiting.has(socket) && error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
          logger.warn(
            { remoteAddress: address, limitBytes: preAuthMaxPayloadBytes },
            'closing a connection that sent too large a message before authenticating',
          );
        } else {
          logger.warn({ remoteAddress: address, code: error.code, message: error.message }, 'closing a connection');
        }
      });
      const timer = setTimeout(() => {
        logger.warn({ remoteAddress: address }, 'closing a connection that never authenticated');
        stopWaiting(socket);
        socket.close(4401, 'authentication timeout');
        // A polite close says why; a peer that doesn't answer it is cut off soon after.
        setTimeout(() => socket.terminate(), 1_000).unref();
      }, authTimeoutMs);
      waiting.set(socket, { addressKey, timer });
      waitingByAddress.set(addressKey, (waitingByAddress.get(addressKey) ?? 0) + 1);
      socket.on('close', () => {
        stopWaiting(socket);
        live.delete(socket);
      });
    },
    authenticated(socket, credentialId) {
      if (!waiting.has(socket)) return false;
      stopWaiting(socket);
      live.set(socket, credentialId);
      // tRPC calls createContext, and so this, synchronously from the connection-params message,
      // and ws parses the next frame only after that message's handlers return: a reconnecting
      // client's queued large call, sent right behind its params, meets the raised limit.
      setSocketPayloadLimit(socket, options.maxPayloadBytes);
      return true;
    },
    close() {
      stopWatching();
      clearInterval(poll);
      clearInterval(inUse);
      for (const socket of [...waiting.keys()]) stopWaiting(socket);
    },
  };
}
