import { join } from 'node:path';

/** Where the generated certificate lives: `{dataDir}/tls/cert.pem` and `key.pem`. */
export function serverCertificatePaths(dataDir: string): { dir: string; certFile: string; keyFile: string } {
  const dir = join(dataDir, 'tls');
  return { dir, certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') };
}
