import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { MolfError } from '@molf/protocol';
import { type CertificateDescription, describeCertificate } from './describe-certificate.ts';
import { serverCertificatePaths } from './server-certificate-paths.ts';

/**
 * The certificate a server would serve, described, without its key and without making one
 * (`molf server --print-fingerprint`): `certFile` when given, else the data directory's generated
 * one; `undefined` when that does not exist yet. A file that holds no certificate is `config_invalid`.
 */
export async function readServerCertificate(options: {
  dataDir: string;
  certFile?: string | undefined;
}): Promise<(CertificateDescription & { certFile: string }) | undefined> {
  const certFile = options.certFile ?? serverCertificatePaths(options.dataDir).certFile;
  let text: string;
  try {
    text = await readFile(certFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && options.certFile === undefined) return undefined;
    throw new MolfError('config_invalid', `cannot read the certificate ${certFile}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    return { ...describeCertificate(new X509Certificate(text)), certFile };
  } catch (error) {
    throw new MolfError('config_invalid', `${certFile} holds no readable certificate: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
