import { isLoopbackHost } from './is-loopback-host.ts';

/** How `molf server` serves: plain, with its generated certificate, or with the user's own. */
export type ServerTlsChoice =
  | {
      type: 'plain';
      /** Said loudly when plain is asked for on an address others can reach. */
      warning?: string;
    }
  | { type: 'generated'; renew: boolean }
  | { type: 'files'; certFile: string; keyFile: string };

export type ChooseServerTlsOptions = {
  host: string;
  /** `--tls` (true), `--no-tls` (false), neither (undefined). */
  tls: boolean | undefined;
  /** `--tls-cert`/`--tls-key` with where each came from: a flag turns TLS on, the environment only says which files. */
  certFile?: { value: string; from: 'flag' | 'env' } | undefined;
  keyFile?: { value: string; from: 'flag' | 'env' } | undefined;
  /** `--renew-cert`. */
  renew: boolean;
};

/**
 * TLS is on by default on an address others can reach and off on loopback; `--tls` turns it on,
 * `--no-tls` off (with a warning off loopback), `--tls-cert`/`--tls-key` as flags turn it on. The
 * environment's `MOLF_TLS_CERT`/`MOLF_TLS_KEY` say which files to serve when it is on, and turn
 * nothing on: `molf up`'s loopback server inherits them and stays plain. An error is a usage error.
 */
export function chooseServerTls(
  options: ChooseServerTlsOptions,
): { ok: true; value: ServerTlsChoice } | { ok: false; error: string } {
  const { host, certFile, keyFile } = options;
  const loopback = isLoopbackHost(host);
  const filesByFlag = certFile?.from === 'flag' || keyFile?.from === 'flag';
  if (options.tls === false && filesByFlag) {
    return { ok: false, error: '--no-tls and --tls-cert/--tls-key contradict each other: give one or the other' };
  }
  const on = options.tls ?? (filesByFlag || !loopback);
  if (!on) {
    if (options.renew) {
      return {
        ok: false,
        error: `--renew-cert renews the certificate of a TLS server, and TLS is off here${loopback ? ' (on loopback it is off unless --tls)' : ' (--no-tls)'}`,
      };
    }
    return loopback
      ? { ok: true, value: { type: 'plain' } }
      : {
          ok: true,
          value: {
            type: 'plain',
            warning:
              `TLS is off (--no-tls) on ${host}, an address other machines can reach: tokens, prompts and ` +
              'tool output travel in clear. Only do this behind a TLS proxy or on a network you trust.',
          },
        };
  }
  if ((certFile === undefined) !== (keyFile === undefined)) {
    return {
      ok: false,
      error: `--tls-cert and --tls-key go together: ${certFile === undefined ? '--tls-key' : '--tls-cert'} was given alone (give both, or neither for a generated certificate)`,
    };
  }
  if (certFile !== undefined && keyFile !== undefined) {
    if (options.renew) {
      return {
        ok: false,
        error: '--renew-cert renews the generated certificate: yours (--tls-cert) is renewed by whoever issued it',
      };
    }
    return { ok: true, value: { type: 'files', certFile: certFile.value, keyFile: keyFile.value } };
  }
  return { ok: true, value: { type: 'generated', renew: options.renew } };
}
