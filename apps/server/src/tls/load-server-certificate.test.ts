import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmod, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@molf/logging';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { generateCertificate } from './generate-certificate.ts';
import { loadServerCertificate, renewServerCertificate } from './load-server-certificate.ts';
import { readServerCertificate } from './read-server-certificate.ts';
import { serverCertificatePaths } from './server-certificate-paths.ts';

const DAY_MS = 86_400_000;
const START = Date.parse('2026-03-01T12:00:00Z');
const NAMES = ['localhost', '127.0.0.1', '::1', 'box'];

/** A real logger whose warnings are kept. */
async function createRecordingLogger() {
  const warnings: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { level: number; msg: string };
        if (entry.level === 40) warnings.push(entry.msg);
      }
      callback();
    },
  });
  return { logger: await createLogger({ name: 'server', level: 'info', destination }), warnings };
}

const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe('loadServerCertificate: the generated certificate', () => {
  it('is made at the first start in {dataDir}/tls, private to its owner, for the given names', async () => {
    await using data = await createTempDir();
    const { logger } = await createRecordingLogger();
    const loaded = await loadServerCertificate({ dataDir: data.path, names: NAMES, now: () => START, logger });
    const { dir, certFile, keyFile } = serverCertificatePaths(data.path);
    expect(loaded).toMatchObject({ source: 'generated', created: true, certFile, keyFile, warnings: [] });
    expect(loaded.names).toEqual(NAMES);
    expect(loaded.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(loaded.fingerprint256).toBe(new X509Certificate(await readFile(certFile)).fingerprint256);
    expect(await readFile(keyFile, 'utf8')).toBe(loaded.key);
    expect(loaded.validTo.getTime() - START).toBeGreaterThan(364 * DAY_MS);
    expect(await mode(dir)).toBe(0o700);
    expect(await mode(keyFile)).toBe(0o600);
  });

  it('is the same certificate on the next start (same fingerprint), not made again', async () => {
    await using data = await createTempDir();
    const { logger, warnings } = await createRecordingLogger();
    const first = await loadServerCertificate({ dataDir: data.path, names: NAMES, now: () => START, logger });
    const second = await loadServerCertificate({
      dataDir: data.path,
      names: NAMES,
      now: () => START + 10 * DAY_MS,
      logger,
    });
    expect(second.created).toBe(false);
    expect(second.fingerprint256).toBe(first.fingerprint256);
    expect(second.key).toBe(first.key);
    expect(warnings).toEqual([]);
  });

  it('is renewed on request, the previous pair kept beside it as .old', async () => {
    await using data = await createTempDir();
    const { logger } = await createRecordingLogger();
    const first = await loadServerCertificate({ dataDir: data.path, names: NAMES, now: () => START, logger });
    const renewed = await renewServerCertificate({
      dataDir: data.path,
      names: [...NAMES, 'molf.lan'],
      now: () => START + 300 * DAY_MS,
      logger,
    });
    const { certFile, keyFile } = serverCertificatePaths(data.path);
    expect(renewed.created).toBe(true);
    expect(renewed.fingerprint256).not.toBe(first.fingerprint256);
    expect(renewed.names).toContain('molf.lan');
    expect(await readFile(`${certFile}.old`, 'utf8')).toBe(first.cert);
    expect(await readFile(`${keyFile}.old`, 'utf8')).toBe(first.key);
    const next = await loadServerCertificate({
      dataDir: data.path,
      names: NAMES,
      now: () => START + 301 * DAY_MS,
      logger,
    });
    expect(next.fingerprint256).toBe(renewed.fingerprint256);
  });

  it('warns, saying molf server --renew-cert, when 30 days or fewer are left', async () => {
    await using data = await createTempDir();
    const { logger, warnings } = await createRecordingLogger();
    await loadServerCertificate({ dataDir: data.path, names: NAMES, now: () => START, logger });
    const at31 = await loadServerCertificate({
      dataDir: data.path,
      names: NAMES,
      now: () => START + 334 * DAY_MS,
      logger,
    });
    expect(at31.warnings).toEqual([]);
    const at30 = await loadServerCertificate({
      dataDir: data.path,
      names: NAMES,
      now: () => START + 335 * DAY_MS,
      logger,
    });
    expect(at30.warnings).toHaveLength(1);
    expect(at30.warnings[0]).toMatch(/expires on 2027-03-01 \(30 days left\).*molf server --renew-cert/);
    expect(warnings).toEqual(at30.warnings);
  });

  it('refuses to start with an expired one, saying molf server --renew-cert', async () => {
    await using data = await createTempDir();
    const { logger } = await createRecordingLogger();
    await loadServerCertificate({ dataDir: data.path, names: NAMES, now: () => START, logger });
    await expect(
      loadServerCertificate({ dataDir: data.path, names: NAMES, now: () => START + 366 * DAY_MS, logger }),
    ).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(/expired on 2027-03-01.*molf server --renew-cert/),
    });
  });

  it('refuses a damaged one, naming the file and --renew-cert, and leaves it in place', async () => {
    await using data = await createTempDir();
    const { logger } = await createRecordingLogger();
    await loadServerCertificate({ dataDir: data.path, names: NAMES, logger });
    const { certFile } = serverCertificatePaths(data.path);
    const damaged = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n';
    await writeFile(certFile, damaged);
    await expect(loadServerCertificate({ dataDir: data.path, names: NAMES, logger })).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(new RegExp(`damaged: ${certFile} holds no readable certificate.*--renew-cert`)),
    });
    expect(await readFile(certFile, 'utf8')).toBe(damaged);
  });

  it("refuses a key that is not the certificate's, naming both files", async () => {
    await using data = await createTempDir();
    const { logger } = await createRecordingLogger();
    await loadServerCertificate({ dataDir: data.path, names: NAMES, logger });
    const { certFile, keyFile } = serverCertificatePaths(data.path);
    await writeFile(keyFile, (await generateCertificate({ names: NAMES })).key);
    await expect(loadServerCertificate({ dataDir: data.path, names: NAMES, logger })).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringContaining(`the key ${keyFile} does not belong to the certificate ${certFile}`),
    });
  });

  it('refuses a certificate whose key is gone, and makes a new pair when the certificate is gone', async () => {
    await using data = await createTempDir();
    const { logger } = await createRecordingLogger();
    const first = await loadServerCertificate({ dataDir: data.path, names: NAMES, logger });
    const { certFile, keyFile } = serverCertificatePaths(data.path);
    await rm(keyFile);
    await expect(loadServerCertificate({ dataDir: data.path, names: NAMES, logger })).rejects.toMatchObject({
      message: expect.stringMatching(new RegExp(`${certFile} has no key ${keyFile}.*--renew-cert`)),
    });
    // No certificate means nobody pinned one: a new pair is made.
    await rm(certFile);
    const made = await loadServerCertificate({ dataDir: data.path, names: NAMES, logger });
    expect(made.created).toBe(true);
    expect(made.fingerprint256).not.toBe(first.fingerprint256);
  });

  it('keeps a certificate that lacks a name asked for now, warning which', async () => {
    await using data = await createTempDir();
    const { logger } = await createRecordingLogger();
    const first = await loadServerCertificate({ dataDir: data.path, names: NAMES, logger });
    const again = await loadServerCertificate({
      dataDir: data.path,
      names: [...NAMES, 'molf.lan', '10.0.0.7'],
      logger,
    });
    expect(again.fingerprint256).toBe(first.fingerprint256);
    expect(again.warnings).toEqual([expect.stringMatching(/does not name molf\.lan, 10\.0\.0\.7 .*--renew-cert/)]);
  });

  it.skipIf(process.platform === 'win32')('tightens a key and a directory opened to others, warning', async () => {
    await using data = await createTempDir();
    const { logger, warnings } = await createRecordingLogger();
    await loadServerCertificate({ dataDir: data.path, names: NAMES, logger });
    const { dir, keyFile } = serverCertificatePaths(data.path);
    await chmod(dir, 0o755);
    await chmod(keyFile, 0o644);
    const loaded = await loadServerCertificate({ dataDir: data.path, names: NAMES, logger });
    expect(await mode(dir)).toBe(0o700);
    expect(await mode(keyFile)).toBe(0o600);
    expect(loaded.warnings).toEqual([
      expect.stringContaining(`${dir} was open to other users (mode 755); now 700`),
      expect.stringContaining(`${keyFile} was open to other users (mode 644); now 600`),
    ]);
    expect(warnings).toEqual(loaded.warnings);
  });
});

describe("loadServerCertificate: the user's own files", () => {
  async function writePair(dir: string, options: { days?: number; now?: number } = {}) {
    const pair = await generateCertificate({
      names: ['molf.example.org'],
      ...(options.days === undefined ? {} : { days: options.days }),
      ...(options.now === undefined ? {} : { now: () => options.now as number }),
    });
    const certFile = join(dir, 'mine.crt');
    const keyFile = join(dir, 'mine.key');
    await writeFile(certFile, pair.cert);
    await writeFile(keyFile, pair.key, { mode: 0o600 });
    return { pair, certFile, keyFile };
  }

  it('serves them as they are, described, and makes nothing in the data directory', async () => {
    await using data = await createTempDir();
    await using own = await createTempDir();
    const { logger } = await createRecordingLogger();
    const { pair, certFile, keyFile } = await writePair(own.path);
    const loaded = await loadServerCertificate({ dataDir: data.path, certFile, keyFile, names: NAMES, logger });
    expect(loaded).toMatchObject({ source: 'files', cert: pair.cert, key: pair.key, names: ['molf.example.org'] });
    expect(loaded.fingerprint256).toBe(new X509Certificate(pair.cert).fingerprint256);
    expect(await readServerCertificate({ dataDir: data.path })).toBeUndefined();
  });

  it('wants both files or neither', async () => {
    await using data = await createTempDir();
    const { logger } = await createRecordingLogger();
    await expect(
      loadServerCertificate({ dataDir: data.path, certFile: '/x.crt', names: NAMES, logger }),
    ).rejects.toMatchObject({ code: 'config_invalid', message: expect.stringContaining('give both, or neither') });
  });

  it.each([
    [
      'a missing certificate file',
      'missing-cert',
      /cannot read the TLS certificate file .*missing\.crt \(--tls-cert\): ENOENT/,
    ],
    ['a certificate file that is not PEM', 'cert-not-pem', /mine\.crt is not a PEM certificate/],
    ['a key file that is not PEM', 'key-not-pem', /mine\.key is not a PEM private key/],
    [
      'an encrypted key (PKCS #8)',
      'key-encrypted',
      /mine\.key is encrypted: give the key without a passphrase \(e\.g\. `openssl pkey -in .*mine\.key -out key\.pem`\)/,
    ],
    [
      'an encrypted key (OpenSSL traditional)',
      'key-encrypted-traditional',
      /mine\.key is encrypted: give the key without a passphrase/,
    ],
    ['a key of another certificate', 'other-key', /the key .*mine\.key does not belong to the certificate .*mine\.crt/],
    ['an expired certificate', 'expired', /mine\.crt expired on 2025-01-02: renew it/],
    [
      'a certificate not valid yet',
      'future',
      /mine\.crt is valid only from 2029-12-31T23:59:00.*check this machine's clock/,
    ],
  ] as const)('refuses %s, saying which file and why', async (_title, kind, expected) => {
    await using data = await createTempDir();
    await using own = await createTempDir();
    const { logger } = await createRecordingLogger();
    let { certFile, keyFile } = await writePair(own.path, {
      ...(kind === 'expired' ? { days: 1, now: Date.parse('2025-01-01T00:00:00Z') } : {}),
      ...(kind === 'future' ? { now: Date.parse('2030-01-01T00:00:00Z') } : {}),
    });
    if (kind === 'missing-cert') certFile = join(own.path, 'missing.crt');
    if (kind === 'cert-not-pem') await writeFile(certFile, new X509Certificate(await readFile(certFile)).raw);
    if (kind === 'key-not-pem') await writeFile(keyFile, 'hello');
    if (kind === 'key-encrypted') {
      const key = createPrivateKey(await readFile(keyFile, 'utf8'));
      await writeFile(
        keyFile,
        key.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string,
      );
    }
    if (kind === 'key-encrypted-traditional') {
      const key = createPrivateKey(await readFile(keyFile, 'utf8'));
      await writeFile(
        keyFile,
        key.export({ type: 'sec1', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string,
      );
    }
    if (kind === 'other-key') {
      keyFile = join(own.path, 'mine.key');
      await writeFile(keyFile, (await generateCertificate({ names: ['x'] })).key);
    }
    await expect(
      loadServerCertificate({ dataDir: data.path, certFile, keyFile, names: NAMES, now: () => START, logger }),
    ).rejects.toMatchObject({ code: 'config_invalid', message: expect.stringMatching(expected) });
  });

  it.skipIf(process.platform === 'win32')(
    'warns about a key file open to others without changing it, and about an end within 30 days',
    async () => {
      await using data = await createTempDir();
      await using own = await createTempDir();
      const { logger, warnings } = await createRecordingLogger();
      const { certFile, keyFile } = await writePair(own.path, { days: 10, now: START });
      await chmod(keyFile, 0o640);
      const loaded = await loadServerCertificate({
        dataDir: data.path,
        certFile,
        keyFile,
        names: NAMES,
        now: () => START,
        logger,
      });
      expect(loaded.warnings).toEqual([
        expect.stringMatching(/mine\.crt expires on 2026-03-11 \(10 days left\): renew it/),
        expect.stringContaining(`${keyFile} is open to other users (mode 640): \`chmod 600 ${keyFile}\``),
      ]);
      expect(warnings).toEqual(loaded.warnings);
      expect(await mode(keyFile)).toBe(0o640);
    },
  );
});

describe('readServerCertificate', () => {
  it("describes the data directory's certificate, or says there is none", async () => {
    await using data = await createTempDir();
    const { logger } = await createRecordingLogger();
    expect(await readServerCertificate({ dataDir: data.path })).toBeUndefined();
    const loaded = await loadServerCertificate({ dataDir: data.path, names: NAMES, logger });
    expect(await readServerCertificate({ dataDir: data.path })).toEqual({
      fingerprint256: loaded.fingerprint256,
      names: NAMES,
      validFrom: loaded.validFrom,
      validTo: loaded.validTo,
      certFile: loaded.certFile,
    });
  });
});
