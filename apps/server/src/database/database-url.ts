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
  const user = decodeURIComponent(parsed.username);
  const host = parsed.hostname === '' ? (parsed.searchParams.get('host') ?? '') : parsed.hostname;
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  return `${user === '' ? '' : `${user}@`}${host}:${parsed.port === '' ? '5432' : parsed.port}/${database}`;
}
