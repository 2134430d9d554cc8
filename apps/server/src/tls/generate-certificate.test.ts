import { createPrivateKey, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { generateCertificate } from './generate-certificate.ts';

describe('generateCertificate', () => {
  it('makes an EC P-256 certificate for the given names, valid a year, whose key matches', async () => {
    const now = Date.parse('2026-01-10T00:00:00Z');
    const { cert, key } = await generateCertificate({ names: ['localhost', '127.0.0.1', '::1'], now: () => now });
    const parsed = new X509Certificate(cert);
    expect(parsed.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(parsed.subject).toBe('CN=molf-server');
    expect(parsed.ca).toBe(false);
    expect(parsed.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(Date.parse(parsed.validTo) - now).toBeGreaterThan(364 * 86_400_000);
    expect(Date.parse(parsed.validFrom)).toBeLessThanOrEqual(now);
    expect(parsed.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(BigInt(`0x${parsed.serialNumber}`)).toBeGreaterThan(0n);
  });

  it('serves TLS 1.3 that a client trusting the certificate verifies with its host name checked', async () => {
    const pair = await generateCertificate({ names: ['localhost', '127.0.0.1'] });
    const server = createServer({ ...pair, minVersion: 'TLSv1.3' }, (_request, response) => response.end('ok'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const trusted = connect({ host: '127.0.0.1', port, ca: pair.cert, servername: 'localhost' });
      await once(trusted, 'secureConnect');
      expect(trusted.authorized).toBe(true);
      expect(trusted.getProtocol()).toBe('TLSv1.3');
      trusted.destroy();

      // The same certificate for a name it does not carry is refused.
      const otherName = connect({ host: '127.0.0.1', port, ca: pair.cert, servername: 'example.org' });
      const [error] = (await once(otherName, 'error')) as [NodeJS.ErrnoException];
      expect(error.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    } finally {
      server.close();
    }
  });

  it('makes a new key each time', async () => {
    const [first, second] = await Promise.all([
      generateCertificate({ names: ['localhost'] }),
      generateCertificate({ names: ['localhost'] }),
    ]);
    expect(new X509Certificate(first.cert).fingerprint256).not.toBe(new X509Certificate(second.cert).fingerprint256);
    expect(first.key).not.toBe(second.key);
  });
});
