import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { currentMolfPaths } from '../current-molf-paths.ts';
import { privateJsonFile } from './private-json-file.ts';
import { serverKey } from './server-key.ts';

const KnownServerSchema = z.discriminatedUnion('type', [
  z
    .object({
      /** Trust on first use, or `--fingerprint`: exactly this certificate. */
      type: z.literal('pinned'),
      fingerprint256: z.string().regex(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/),
      /** The certificate itself, PEM: the trust anchor of every handshake with the server. */
      cert: z.string().min(1),
      pinnedAt: z.string(),
      /** Its expiry, to warn before it comes. */
      validTo: z.string(),
    })
    // The fingerprint is what the person compared and what the probe checks; the certificate is
    // what the handshake trusts. Apart, the person is told one thing and the handshake does another.
    .refine((pin) => fingerprintOfPem(pin.cert) === pin.fingerprint256, {
      path: ['cert'],
      message: 'not the certificate whose SHA-256 is the pinned fingerprint',
    }),
  z.object({
    /** Certificates signed by the CA in this file, for the URL's host name. */
    type: z.literal('ca'),
    caFile: z.string().min(1),
    savedAt: z.string(),
  }),
]);
export type KnownServer = z.infer<typeof KnownServerSchema>;

function fingerprintOfPem(pem: string): string | undefined {
  try {
    return new X509Certificate(pem).fingerprint256;
  } catch {
    return undefined;
  }
}

const KnownServersFileSchema = z.object({ version: z.literal(1), servers: z.record(z.string(), KnownServerSchema) });
type KnownServersFile = z.infer<typeof KnownServersFileSchema>;

/** `known-servers.json` (0600) in the client dir: how each `wss://` server this machine talks to is verified. */
export function knownServers(clientDir: string = currentMolfPaths().clientDir) {
  const file = privateJsonFile<KnownServersFile>(join(clientDir, 'known-servers.json'), KnownServersFileSchema, () => ({
    version: 1,
    servers: {},
  }));
  return {
    path: file.path,
    async get(url: string): Promise<KnownServer | undefined> {
      return (await file.read()).servers[serverKey(url)];
    },
    async set(url: string, entry: KnownServer): Promise<void> {
      await file.update((value) => {
        value.servers[serverKey(url)] = entry;
      });
    },
    /** Forgets a server's pin or CA; true when there was one. */
    async forget(url: string): Promise<boolean> {
      return file.update((value) => {
        const key = serverKey(url);
        const had = value.servers[key] !== undefined;
        delete value.servers[key];
        return had;
      });
    },
    async list(): Promise<Array<{ server: string } & KnownServer>> {
      return Object.entries((await file.read()).servers).map(([server, entry]) => ({ server, ...entry }));
    },
  };
}
export type KnownServers = ReturnType<typeof knownServers>;
