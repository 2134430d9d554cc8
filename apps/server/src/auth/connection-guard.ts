import { unwatchFile, watchFile } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Logger } from '@molf/logging';
import type { WebSocket } from 'ws';
import type { CredentialStore } from './credential-store.ts';

export type ConnectionGuardOptions = {
  credentials: CredentialStore;
  logger: Logger;
  /** A socket that has not authenticated within this time is closed. Default 10 s. */
  authTimeoutMs?: number;
  /** Sockets waiting to authenticate, per address and in all. Default 16 and 256. */
  maxUnauthenticated?: { perAddress?: number; total?: number };
  /** How often the credentials file is checked for revocations. Default 2 s. */
  credentialsPollMs?: number;
};

/**
 * Watches every socket from connection to close: bounds the ones still waiting to authenticate,
 * closes those that never do, and cuts the ones whose credential is revoked.
 */
export type ConnectionGuard = {
  /** Call for each new socket; it may be refused on the spot. */
  admit(socket: WebSocket, request: IncomingMessage): void;
  /**
   * Call once a socket's credential is verified; false if the socket was refused or timed out
   * meanwhile (a closing socket still delivers frames), and must not be served.
   */
  authenticated(socket: WebSocket, credentialId: string): boolean;
  close(): void;
};

export function createConnectionGuard(options: ConnectionGuardOptions): ConnectionGuard {
  const { credentials, logger } = options;
  const authTimeoutMs = options.authTimeoutMs ?? 10_000;
  const maxPerAddress = options.maxUnauthenticated?.perAddress ?? 16;
  const maxTotal = options.maxUnauthenticated?.total ?? 256;
  /** Sockets waiting to authenticate: their address and their timeout. */
  const waiting = new Map<WebSocket, { address: string; timer: NodeJS.Timeout }>();
  const waitingByAddress = new Map<string, number>();
  /** Authenticated sockets and the credential each used. */
  const live = new Map<WebSocket, string>();

  function stopWaiting(socket: WebSocket): void {
    const entry = waiting.get(socket);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    waiting.delete(socket);
    const left = (waitingByAddress.get(entry.address) ?? 1) - 1;
    if (left === 0) waitingByAddress.delete(entry.address);
    else waitingByAddress.set(entry.address, left);
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
  watchFile(credentials.path, { interval: options.credentialsPollMs ?? 2_000, persistent: false }, closeRevoked);

  return {
    admit(socket, request) {
      const address = request.socket.remoteAddress ?? 'unknown';
      if (waiting.size >= maxTotal || (waitingByAddress.get(address) ?? 0) >= maxPerAddress) {
        logger.warn({ remoteAddress: address }, 'too many unauthenticated connections; refusing one');
        // terminate, not close: a peer that ignores the close frame would keep the socket for 30 s.
        socket.terminate();
        return;
      }
      const timer = setTimeout(() => {
        logger.warn({ remoteAddress: address }, 'closing a connection that never authenticated');
        stopWaiting(socket);
        socket.close(4401, 'authentication timeout');
        // A polite close says why; a peer that doesn't answer it is cut off soon after.
        setTimeout(() => socket.terminate(), 1_000).unref();
      }, authTimeoutMs);
      waiting.set(socket, { address, timer });
      waitingByAddress.set(address, (waitingByAddress.get(address) ?? 0) + 1);
      socket.on('close', () => {
        stopWaiting(socket);
        live.delete(socket);
      });
    },
    authenticated(socket, credentialId) {
      if (!waiting.has(socket)) return false;
      stopWaiting(socket);
      live.set(socket, credentialId);
      return true;
    },
    close() {
      unwatchFile(credentials.path, closeRevoked);
      for (const socket of [...waiting.keys()]) stopWaiting(socket);
    },
  };
}
