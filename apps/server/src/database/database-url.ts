import { MolfError } from '@molf/protocol';

/** The environment variable `molf server` reads the database URL from when `--database` is not given. */
export const DATABASE_URL_ENV = 'MOLF_DATABASE_URL';

/**
 * Checks a `postgres://` URL before anything connects with it, and names it without its password
 * (`user@host:port/database`) for messages and logs: a password never reaches either.
 */
export function describeDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new MolfError(
      'config_invalid',
      'the database URL is not a URL: use postgres://user:password@host:port/database',
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new MolfError(
      'config_invalid',
      `the database URL must start with postgres:// (it starts with ${parsed.protocol}//): Molf's database backend is PostgreSQL`,
    );
  }
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) {
    throw new MolfError(
      'config_invalid',
      'the database URL names no host: use postgres://user:password@host:port/database',
    );
  }
  // Each part is decoded as the driver will decode it: a malformed %-escape is named here, not left
  // to a bare "URI malformed" (the password is checked too, and never shown).
  const decode = (part: string, what: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw new MolfError(
        'config_invalid',
        `the database URL's ${what} has a malformed %-escape: write a "%" in it as %25 (and other reserved characters as %XX)`,
      );
    }
  };
  const user = decode(parsed.username, 'user name');
  decode(parsed.password, 'password');
  const host = parsed.hostname === '' ? (parsed.searchParams.get('host') ?? '') : parsed.hostname;
  const database = decode(parsed.pathname.replace(/^\//, ''), 'database name');
  return `${user === '' ? '' : `${user}@`}${host}:${parsed.port === '' ? '5432' : parsed.port}/${database}`;
}
