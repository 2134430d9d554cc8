import type { X509Certificate } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { Logger } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';
import { toCertificateValidity } from './certificate-validity.ts';
import { type CertificateDescription, describeCertificate } from './describe-certificate.ts';
import { type CertificatePair, generateCertificate } from './generate-certificate.ts';
import { safeParseCertificatePair } from './safe-parse-certificate-pair.ts';
import { serverCertificatePaths } from './server-certificate-paths.ts';

/** The certificate a server serves, with what people compare and act on. */
export type ServerCertificate = CertificatePair &
  CertificateDescription & {
    /** `generated`: the server's own, in `{dataDir}/tls`; `files`: the user's `--tls-cert`/`--tls-key`. */
    source: 'generated' | 'files';
    certFile: string;
    keyFile: string;
    /** Whether it was made by this call (first start, renewal). */
    created: boolean;
    /**
     * What a person should act on, one sentence each (it expires within 30 days, it lacks a name
     * the server is reached by, its key is readable by others); each is logged as a warning too.
     */
    warnings: string[];
  };

export type LoadServerCertificateOptions = {
  /** The server's data directory; the generated certificate is in its `tls/`. */
  dataDir: string;
  /** The user's own certificate (PEM, a chain may follow), with `keyFile`. Default none: the generated one. */
  certFile?: string | undefined;
  /** The private key of `certFile` (PEM, unencrypted). Default none. */
  keyFile?: string | undefined;
  /**
   * The names a generated certificate is made for (see `defaultCertificateNames`); an existing one
   * lacking any of them is kept, with a warning.
   */
  names: readonly string[];
  /** The clock, for tests. Default `Date.now`. */
  now?: () => number;
  logger: Logger;
};

const RENEW_ADVICE = 'run `molf server --renew-cert` to make a new one (clients must then trust it again)';

/**
 * The certificate to serve: the user's files when given (both, checked: PEM, key of this
 * certificate, valid now), else the generated one in `{dataDir}/tls`, made at the first start. A
 * generated certificate that is damaged or expired is an error, never silently replaced, since
 * clients pinned it. Fails with `config_invalid`, naming the files and what to do.
 */
export async function loadServerCertificate(options: LoadServerCertificateOptions): Promise<ServerCertificate> {
  if ((options.certFile === undefined) !== (options.keyFile === undefined)) {
    throw new MolfError(
      'config_invalid',
      'a TLS certificate file and its key file go together (--tls-cert and --tls-key): give both, or neither for a generated certificate',
    );
  }
  if (options.certFile !== undefined && options.keyFile !== undefined) {
    return loadOwnCertificate({ ...options, certFile: options.certFile, keyFile: options.keyFile });
  }
  return loadGeneratedCertificate(options);
}

/**
 * Makes a new generated certificate for `names`, keeping the previous pair beside it as
 * `cert.pem.old` and `key.pem.old`. Clients that pinned the old one must trust the new one.
 */
export async function renewServerCertificate(
  options: Omit<LoadServerCertificateOptions, 'certFile' | 'keyFile'>,
): Promise<ServerCertificate> {
  const { dir, certFile, keyFile } = serverCertificatePaths(options.dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // The certificate first: without it the key is never served, and a start after a crash here makes a new pair.
  for (const file of [certFile, keyFile]) {
    await rename(file, `${file}.old`).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  const renewed = await createGeneratedCertificate(options);
  options.logger.info(
    { certFile, fingerprint256: renewed.fingerprint256, previous: `${certFile}.old` },
    'TLS certificate renewed: clients that pinned the previous one must trust this one',
  );
  return renewed;
}

async function loadGeneratedCertificate(options: LoadServerCertificateOptions): Promise<ServerCertificate> {
  const { logger } = options;
  const { dir, certFile, keyFile } = serverCertificatePaths(options.dataDir);
  const certText = await readIfExists(certFile);
  // Written last: without it no client can have pinned anything, and a new pair is made.
  if (certText === undefined) return createGeneratedCertificate(options);
  const keyText = await readIfExists(keyFile);
  if (keyText === undefined) {
    throw new MolfError(
      'config_invalid',
      `the server's certificate ${certFile} has no key ${keyFile}: ${RENEW_ADVICE}`,
    );
  }
  const warnings = await tightenPermissions({ dir, keyFile, logger });
  const parsed = safeParseCertificatePair({
    cert: { text: certText, file: certFile },
    key: { text: keyText, file: keyFile },
  });
  if (!parsed.ok) {
    throw new MolfError(
      'config_invalid',
      `the server's certificate is damaged: ${parsed.error}. It is not replaced by itself, since clients pinned it: ${RENEW_ADVICE}`,
    );
  }
  const described = describeCertificate(parsed.value);
  const validity = toCertificateValidity({ ...described, now: options.now?.() ?? Date.now() });
  switch (validity.type) {
    case 'expired':
      throw new MolfError(
        'config_invalid',
        `the server's certificate ${certFile} expired on ${day(described.validTo)}: ${RENEW_ADVICE}`,
      );
    case 'not_yet_valid':
      throw new MolfError(
        'config_invalid',
        `the server's certificate ${certFile} is valid only from ${described.validFrom.toISOString()}: check this machine's clock, or ${RENEW_ADVICE}`,
      );
    case 'expiring':
      warnings.push(
        `the server's certificate expires on ${day(described.validTo)} (${plural(validity.daysLeft, 'day')} left): ${RENEW_ADVICE}`,
      );
      break;
    case 'valid':
      break;
  }
  const missing = options.names.filter((name) => !certifies(parsed.value, described, name));
  if (missing.length > 0) {
    warnings.push(
      `the server's certificate ${certFile} does not name ${missing.join(', ')} (made for ${described.names.join(', ')}): ` +
        `clients that check host names will refuse it there; ${RENEW_ADVICE}`,
    );
  }
  for (const warning of warnings) logger.warn({ certFile }, warning);
  return {
    cert: certText,
    key: keyText,
    ...described,
    source: 'generated',
    certFile,
    keyFile,
    created: false,
    warnings,
  };
}

async function loadOwnCertificate(
  options: LoadServerCertificateOptions & { certFile: string; keyFile: string },
): Promise<ServerCertificate> {
  const { certFile, keyFile, logger } = options;
  const certText = await readOwnFile(certFile, 'certificate');
  const keyText = await readOwnFile(keyFile, 'key');
  const parsed = safeParseCertificatePair({
    cert: { text: certText, file: certFile },
    key: { text: keyText, file: keyFile },
  });
  if (!parsed.ok) throw new MolfError('config_invalid', `TLS: ${parsed.error}`);
  const described = describeCertificate(parsed.value);
  const validity = toCertificateValidity({ ...described, now: options.now?.() ?? Date.now() });
  const warnings: string[] = [];
  switch (validity.type) {
    case 'expired':
      throw new MolfError(
        'config_invalid',
        `the certificate ${certFile} expired on ${day(described.validTo)}: renew it, or leave out --tls-cert and --tls-key for a generated one`,
      );
    case 'not_yet_valid':
      throw new MolfError(
        'config_invalid',
        `the certificate ${certFile} is valid only from ${described.validFrom.toISOString()}: check this machine's clock`,
      );
    case 'expiring':
      warnings.push(
        `the certificate ${certFile} expires on ${day(described.validTo)} (${plural(validity.daysLeft, 'day')} left): renew it`,
      );
      break;
    case 'valid':
      break;
  }
  const keyMode = (await stat(keyFile)).mode & 0o777;
  if (process.platform !== 'win32' && (keyMode & 0o077) !== 0) {
    // The user's file: said, not changed.
    warnings.push(
      `the TLS key ${keyFile} is open to other users (mode ${keyMode.toString(8)}): \`chmod 600 ${keyFile}\``,
    );
  }
  for (const warning of warnings) logger.warn({ certFile }, warning);
  return { cert: certText, key: keyText, ...described, source: 'files', certFile, keyFile, created: false, warnings };
}

/** A new pair for `names`, written key first and certificate last, each atomically and private. */
async function createGeneratedCertificate(
  options: Pick<LoadServerCertificateOptions, 'dataDir' | 'names' | 'now' | 'logger'>,
): Promise<ServerCertificate> {
  const { dir, certFile, keyFile } = serverCertificatePaths(options.dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const pair = await generateCertificate({ names: options.names, ...(options.now ? { now: options.now } : {}) });
  await writeFileAtomic(keyFile, pair.key, { mode: 0o600 });
  await writeFileAtomic(certFile, pair.cert, { mode: 0o600 });
  const parsed = safeParseCertificatePair({
    cert: { text: pair.cert, file: certFile },
    key: { text: pair.key, file: keyFile },
  });
  if (!parsed.ok) throw new MolfError('internal', `the certificate just made is unusable: ${parsed.error}`);
  const described = describeCertificate(parsed.value);
  options.logger.info(
    { certFile, fingerprint256: described.fingerprint256, names: described.names, validTo: described.validTo },
    'made a TLS certificate',
  );
  return { ...pair, ...described, source: 'generated', certFile, keyFile, created: true, warnings: [] };
}

/** Whether the certificate is for `name` (exactly, or through a wildcard name). */
function certifies(certificate: X509Certificate, described: CertificateDescription, name: string): boolean {
  if (described.names.includes(name)) return true;
  return isIP(name) === 0 ? certificate.checkHost(name) !== undefined : certificate.checkIP(name) !== undefined;
}

/** The generated key and its directory are the owner's alone: loosened by hand, they are tightened, with a warning. */
async function tightenPermissions(options: { dir: string; keyFile: string; logger: Logger }): Promise<string[]> {
  if (process.platform === 'win32') return [];
  const warnings: string[] = [];
  for (const [path, mode] of [
    [options.dir, 0o700],
    [options.keyFile, 0o600],
  ] as const) {
    const current = (await stat(path)).mode & 0o777;
    if ((current & 0o077) === 0) continue;
    await chmod(path, mode);
    warnings.push(
      `${path} was open to other users (mode ${current.toString(8)}); now ${mode.toString(8)}. ` +
        'If someone else may have read the key, run `molf server --renew-cert`',
    );
  }
  return warnings;
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new MolfError('config_invalid', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
}

async function readOwnFile(path: string, what: 'certificate' | 'key'): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const flag = what === 'certificate' ? '--tls-cert' : '--tls-key';
    throw new MolfError(
      'config_invalid',
      `cannot read the TLS ${what} file ${path} (${flag}): ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}

function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
