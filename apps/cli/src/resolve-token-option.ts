import { MolfError } from '@molf/protocol';
import { readTokenFile, type TokenFile } from './read-token-file.ts';

/**
 * The token of a `--x-token <token>` / `--x-token-file <path>` pair of options (each may also come
 * from its environment variable), or undefined when neither is given. Both given is refused:
 * which one wins would be a guess, and a wrong guess is a confusing `invalid token`.
 */
export async function resolveTokenOption(options: {
  value: string | undefined;
  file: string | undefined;
  /** The two options as people type them, e.g. `['--token', '--token-file']`. */
  flags: readonly [string, string];
}): Promise<TokenFile | undefined> {
  const value = options.value === '' ? undefined : options.value;
  const file = options.file === '' ? undefined : options.file;
  if (value !== undefined && file !== undefined) {
    const [valueFlag, fileFlag] = options.flags;
    throw new MolfError(
      'config_invalid',
      `give the token with ${valueFlag} or ${fileFlag}, not both (their environment variables count too)`,
    );
  }
  if (file !== undefined) return readTokenFile(file);
  return value === undefined ? undefined : { token: value };
}
