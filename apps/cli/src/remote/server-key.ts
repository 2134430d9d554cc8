import { MolfError } from '@molf/protocol';

/**
 * The name a server is saved under (pins, logins): `wss://host:port`, host in lower case, default
 * port written out, no path. `wss://Example.org/` and `wss://example.org:443` are one server. A
 * URL with a user name or password is refused.
 */
export function serverKey(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new MolfError('invalid_input', `${url} is not a URL: use wss://HOST:PORT (or ws:// on loopback)`, {
      field: 'server',
    });
  }
  if (parsed.protocol !== 'wss:' && parsed.protocol !== 'ws:') {
    throw new MolfError(
      'invalid_input',
      `${url} is not a server URL: use wss://HOST:PORT (or ws://HOST:PORT on loopback and trusted networks)`,
      { field: 'server' },
    );
  }
  const port = parsed.port === '' ? (parsed.protocol === 'wss:' ? '443' : '80') : parsed.port;
  if (parsed.username !== '' || parsed.password !== '') {
    // `wss://molf.example.org@evil.example` reads as one server and reaches another; and Molf never
    // sends URL credentials (the token is its credential), so they are a mistake or a trick.
    const shown = `${parsed.protocol}//${parsed.username}${parsed.password === '' ? '' : ':…'}@${parsed.host}`;
    throw new MolfError(
      'invalid_input',
      `${shown} has a user name or password before the host, which Molf does not use; the server it names is ` +
        `${parsed.hostname}, port ${port}. Write ${parsed.protocol}//HOST:PORT`,
      { field: 'server' },
    );
  }
  return `${parsed.protocol}//${parsed.hostname.toLowerCase()}:${port}`;
}
