import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';

/** What a plain-HTTP request or a `ws://` connection to a TLS port is told, before it is closed. */
export const PLAIN_HTTP_ON_TLS_ANSWER = 'this server speaks TLS: use https:// or wss://';

/** The first byte of every TLS connection: a handshake record (RFC 8446 §5.1, ContentType 22). */
const TLS_HANDSHAKE = 0x16;

export type PlainHttpOnTlsOptions = {
  /** A connection that sends no first byte within this time is closed. Default 10 s. */
  firstByteTimeoutMs?: number;
  /** How long a plain connection may take, in all, to read the answer and close. Default 5 s. */
  answerTimeoutMs?: number;
};

/**
 * Makes a TLS server answer the people who type `http://` or `ws://`: each connection's first byte
 * is read before TLS takes it; a TLS handshake goes on to the server as usual, anything else gets
 * `HTTP/1.1 400` with {@link PLAIN_HTTP_ON_TLS_ANSWER} and is closed (otherwise the TLS layer just
 * drops it, and the person sees "connection reset" or "socket hang up"). Returns a function that
 * destroys every connection accepted since, for a close that must not wait for any of them.
 */
export function answerPlainHttpOnTls(server: HttpsServer, options: PlainHttpOnTlsOptions = {}): () => void {
  const listeners = server.listeners('connection');
  const [startTls] = listeners;
  // The server's own 'connection' listener starts TLS on a socket (tls.Server's constructor adds
  // exactly one); it runs after the first byte is known. Any other arrangement is a Node change.
  if (listeners.length !== 1 || startTls === undefined) {
    throw new Error(`expected one 'connection' listener on the TLS server, found ${listeners.length}`);
  }
  server.removeAllListeners('connection');
  const firstByteTimeoutMs = options.firstByteTimeoutMs ?? 10_000;
  const answerTimeoutMs = options.answerTimeoutMs ?? 5_000;
  const sockets = new Set<Socket>();

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // A peer that resets before its first byte is nobody's error; after it, TLS reports its own.
    socket.on('error', () => {});
    socket.setTimeout(firstByteTimeoutMs, () => socket.destroy());
    const route = () => {
      const first = socket.read(1) as Buffer | null;
      if (first === null) {
        if (!socket.readableEnded && !socket.destroyed) socket.once('readable', route);
        return;
      }
      socket.setTimeout(0);
      // TLS reads what is buffered on the socket before it reads the wire (initRead in _tls_wrap).
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE) {
        startTls.call(server, socket);
        return;
      }
      const body = `${PLAIN_HTTP_ON_TLS_ANSWER}\n`;
      socket.end(
        'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      // The request is read and dropped: closing with unread bytes would reset the connection and
      // lose the answer. A deadline, not an idle timeout: a peer sending a byte now and then would
      // otherwise keep the socket for ever.
      socket.resume();
      const deadline = setTimeout(() => socket.destroy(), answerTimeoutMs);
      socket.once('close', () => clearTimeout(deadline));
    };
    route();
  });

  return () => {
    for (const socket of sockets) socket.destroy();
  };
}
