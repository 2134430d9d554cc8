/**
 * The Node entry of the client (`@molf/client/node`): the same client, connecting with `ws`, whose
 * payload limit and close timeout the platform WebSocket does not offer. The CLI, the worker and
 * tests use this; browsers use `@molf/client`.
 */
import { WebSocket as NodeWebSocket } from 'ws';
import {
  createMolfClient as createPlatformClient,
  isRefusalFrame,
  type MolfClient,
  type MolfClientOptions,
  type WebSocketClassFactory,
} from './create-molf-client.ts';

import { describeTlsRefusal } from './node/describe-tls-refusal.ts';
import { type ServerTrust, tlsOptionsFor } from './node/server-trust.ts';

export * from './index.ts';
export { describeCertificateProblem, describeTlsRefusal } from './node/describe-tls-refusal.ts';
export {
  type CertificateProbe,
  hostAndPort,
  type ProbeOptions,
  probeServerCertificate,
} from './node/probe-server-certificate.ts';
export {
  httpUrlOf,
  type RedeemedCredential,
  type RedeemPairingCodeOptions,
  redeemPairingCode,
} from './node/redeem-pairing-code.ts';
export {
  CertificateMismatchError,
  isFingerprint,
  normalizeFingerprint,
  type ServerTrust,
  type TrustTlsOptions,
  tlsOptionsFor,
} from './node/server-trust.ts';

export type NodeMolfClientOptions = Omit<MolfClientOptions, 'webSocket'> & {
  /** Largest message accepted from the server. Default 128 MiB. */
  maxPayloadBytes?: number;
  /**
   * How a `wss://` server is verified, in the TLS handshake of every connection and reconnection,
   * before the token is sent. Default: the system's CAs and the URL's host name.
   */
  trust?: ServerTrust;
};

export function createMolfClient(options: NodeMolfClientOptions): MolfClient {
  const maxPayload = options.maxPayloadBytes ?? 128 * 1024 * 1024;
  const tls = options.trust === undefined ? {} : tlsOptionsFor(options.trust);
  const webSocket: WebSocketClassFactory = ({ onRefusal, closeTimeoutMs, onUntrusted }) =>
    class MolfNodeWebSocket extends NodeWebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        // A close handshake with a dead peer would otherwise wait ws's default 30 s before the
        // client notices and reconnects; a missing pong already proved the peer gone.
        super(url, protocols, { ...tls, maxPayload, closeTimeout: closeTimeoutMs } as ConstructorParameters<
          typeof NodeWebSocket
        >[2]);
        // A handshake that refused the server fails the attempt like an absent server would; why
        // it failed is what the person needs (a renewed certificate, another host name).
        this.on('error', (error: Error) => {
          const refusal = describeTlsRefusal(error, {
            url: String(url),
            ...(options.trust === undefined ? {} : { trust: options.trust }),
          });
          if (refusal !== undefined) onUntrusted(refusal);
        });
        // Raw frames: a second `addEventListener('message')` would decode every message again.
        this.on('message', (data: Buffer | ArrayBuffer, isBinary: boolean) => {
          if (isBinary) return;
          // tRPC sets binaryType to 'arraybuffer'; a Buffer view over it copies nothing.
          const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data);
          if (bytes[0] === 0x7b && isRefusalFrame(bytes.subarray(0, 10).toString())) onRefusal(bytes.toString());
        });
      }
    } as unknown as typeof WebSocket;
  const { maxPayloadBytes: _maxPayloadBytes, trust: _trust, ...rest } = options;
  return createPlatformClient({ ...rest, webSocket });
}
