import { join } from 'node:path';
import { RoleSchema } from '@molf/protocol';
import { z } from 'zod';
import { currentMolfPaths } from '../current-molf-paths.ts';
import { privateJsonFile } from './private-json-file.ts';
import { serverKey } from './server-key.ts';

const LoginSchema = z.object({
  token: z.string().min(1),
  role: RoleSchema,
  /** The credential's name on the server (`molf token list`). */
  name: z.string(),
  credentialId: z.string(),
  savedAt: z.string(),
});
export type SavedLogin = z.infer<typeof LoginSchema>;

const LoginsFileSchema = z.object({
  version: z.literal(1),
  /** The server client commands use when neither a flag nor a `molf up` of the directory names one. */
  default: z.string().optional(),
  logins: z.record(z.string(), LoginSchema),
});
type LoginsFile = z.infer<typeof LoginsFileSchema>;

/**
 * `logins.json` (0600) in the client dir: the client credential `molf login` got for each server
 * (by pairing code or a given token), and which server is the default.
 */
export function savedLogins(clientDir: string = currentMolfPaths().clientDir) {
  const file = privateJsonFile<LoginsFile>(join(clientDir, 'logins.json'), LoginsFileSchema, () => ({
    version: 1,
    logins: {},
  }));
  return {
    path: file.path,
    async get(url: string): Promise<SavedLogin | undefined> {
      return (await file.read()).logins[serverKey(url)];
    },
    /** The default server's URL and login, if one was saved. */
    async defaultLogin(): Promise<({ url: string } & SavedLogin) | undefined> {
      const value = await file.read();
      const login = value.default === undefined ? undefined : value.logins[value.default];
      return login === undefined || value.default === undefined ? undefined : { url: value.default, ...login };
    },
    async save(url: string, login: SavedLogin, options: { makeDefault: boolean }): Promise<void> {
      await file.update((value) => {
        const key = serverKey(url);
        value.logins[key] = login;
        if (options.makeDefault) value.default = key;
      });
    },
    async remove(url: string): Promise<boolean> {
      return file.update((value) => {
        const key = serverKey(url);
        const had = value.logins[key] !== undefined;
        delete value.logins[key];
        if (value.default === key) delete value.default;
        return had;
      });
    },
    async list(): Promise<{ default?: string; logins: Array<{ url: string } & SavedLogin> }> {
      const value = await file.read();
      return {
        ...(value.default === undefined ? {} : { default: value.default }),
        logins: Object.entries(value.logins).map(([url, login]) => ({ url, ...login })),
      };
    },
  };
}
export type SavedLogins = ReturnType<typeof savedLogins>;
