import { MolfError } from '@molf/protocol';
import type { WebSocket } from 'ws';

type ReceiverInternals = { _receiver?: { _maxPayload?: unknown } };

/**
 * Sets the largest message a server-side socket accepts from now on; a larger one closes the
 * socket with 1009.
 *
 * ws has one `maxPayload` per server, copied into each socket's receiver when it is created, and
 * no public way to change it per socket. The receiver keeps it in `_maxPayload` and checks every
 * frame's announced length against it as soon as the frame header is parsed, so an oversized
 * frame is refused before its payload is buffered. This reaches into ws 8.23.0, pinned exactly
 * in the pnpm catalog; `websocket-admission.test.ts` fails if an upgrade moves the field.
 */
export function setSocketPayloadLimit(socket: WebSocket, bytes: number): void {
  const receiver = (socket as unknown as ReceiverInternals)._receiver;
  if (receiver === undefined || typeof receiver._maxPayload !== 'number') {
    throw new MolfError(
      'internal',
      'this version of ws keeps no per-socket message limit where Molf expects it (ws 8.23.0 does)',
    );
  }
  receiver._maxPayload = bytes;
}
