import { isIP } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { MolfError } from '@molf/protocol';

/** What a server showed in a TLS handshake in which the client sent nothing. */
export type CertificateProbe =
  | {
      type: 'tls';
      /** The certificate, PEM. */
      cert: string;
      /** SHA-256, `AB:CD:…`. */
      fingerprint256: string;
      /** Whether it is its own issuer (what `molf server` generates), so that it can be pinned. */
      selfSigned: boolean;
      subject: string;
      issuer: string;
      /** `DNS:localhost, IP Address:127.0.0.1`, or empty. */
      names: string;
      validFrom: Date;
      validTo: Date;
      /**
       * Whether the CAs it was checked against (the system's, or the probe's `ca`) vouch for it for
       * the URL's host name.
       */
      trusted: boolean;
      /** Why they don't (`DEPTH_ZERO_SELF_SIGNED_CERT`, `ERR_TLS_CERT_ALTNAME_INVALID`…). */
      authorizationError?: string;
    }
  /** The port answered, but not with TLS: a plain `ws://` server. */
  | { type: 'not-tls' };

/** Host and port of a `wss://`/`https://` (or `ws://`/`http://`) URL. */
export function hostAndPort(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  const secure = parsed.protocol === 'wss:' || parsed.protocol === 'https:';
  const port = parsed.port === '' ? (secure ? 443 : 80) : Number(parsed.port);
  // `new URL` keeps the brackets of an IPv6 host.
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port };
}

/** OpenSSL's words for a peer that answered a TLS hello with something else. */
const NOT_TLS = /wrong version number|packet length too long|unknown protocol|record layer failure|http request/i;

export type ProbeOptions = {
  /** How long the server has to answer the TLS hello. Default 5 s. */
  timeoutMs?: number;
  /** A CA (PEM) to check the certificate against, instead of the system's. Default: the system's. */
  ca?: string;
};

/**
 * Opens a TLS connection to the server of `url`, reads the certificate it shows and closes it,
 * sending no byte of application data: a token can't leave in a probe. Fails with `timeout` or a
 * `MolfError('timeout', …)` naming the address when nothing answers.
 */
export function probeServerCertificate(url: string, options: ProbeOptions = {}): Promise<CertificateProbe> {
  const { host, port } = hostAndPort(url);
  const timeoutMs = options.timeoutMs ?? 5_000;
  return new Promise<CertificateProbe>((resolve, reject) => {
    const socket: TLSSocket = connect({
      host,
      port,
      ...(isIP(host) === 0 ? { servername: host } : {}),
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      // Only to read what the server shows: the socket is closed at once, nothing sent on it.
      rejectUnauthorized: false,
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new MolfError('timeout', `no TLS answer from ${host}:${port} within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const peer = socket.getPeerX509Certificate();
      const authorized = socket.authorized;
      const authorizationError = socket.authorizationError;
      socket.destroy();
      if (peer === undefined) {
        reject(new MolfError('internal', `the server at ${host}:${port} showed no certificate`));
        return;
      }
      resolve({
        type: 'tls',
        cert: peer.toString(),
        fingerprint256: peer.fingerprint256,
        selfSigned: peer.subject === peer.issuer && peer.verify(peer.publicKey),
        subject: peer.subject,
        issuer: peer.issuer,
        names: peer.subjectAltName ?? '',
        validFrom: new Date(peer.validFrom),
        validTo: new Date(peer.validTo),
        trusted: authorized,
        ...(authorizationError === null || authorizationError === undefined
          ? {}
          : { authorizationError: String(authorizationError) }),
      });
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      if (NOT_TLS.test(error.message) || error.code === 'ERR_SSL_WRONG_VERSION_NUMBER') {
        resolve({ type: 'not-tls' });
        return;
      }
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') {
        // A plain HTTP server may close on a TLS hello without answering.
        resolve({ type: 'not-tls' });
        return;
      }
      reject(
        new MolfError('timeout', `cannot reach ${host}:${port}: ${error.code ?? error.message}`, { cause: error }),
      );
    });
  });
}
