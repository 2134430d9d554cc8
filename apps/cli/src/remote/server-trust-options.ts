import type { ServerTrust } from '@molf/client/node';
import { type Command, Option } from 'commander';
import { askOnTerminal } from './ask-on-terminal.ts';
import type { KnownServers } from './known-servers.ts';
import { resolveServerTrust } from './resolve-server-trust.ts';

/** The flags that say how to verify a `wss://` server: `--fingerprint`, `--tls-ca`. */
export type ServerTrustFlags = { fingerprint?: string; tlsCa?: string };

/** Adds `--fingerprint` (`MOLF_SERVER_FINGERPRINT`) and `--tls-ca` (`MOLF_TLS_CA`) to a command. */
export function addServerTrustOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--fingerprint <sha256>',
        "the SHA-256 of a wss:// server's certificate (`molf server --print-fingerprint` on the server), pinned on first use",
      ).env('MOLF_SERVER_FINGERPRINT'),
    )
    .addOption(
      new Option('--tls-ca <file>', "a CA file that signed a wss:// server's certificate (host name checked)").env(
        'MOLF_TLS_CA',
      ),
    );
}

/**
 * Verifies the server of `url` for a command run by a person: the flags, what is saved, the
 * system's CAs, else a question on the terminal (none without one). A given CA file is remembered
 * for the server. Lines for the person go to stderr after `program: `.
 */
export function verifyServerForCommand(
  url: string,
  flags: ServerTrustFlags,
  options: { program?: string; store?: KnownServers } = {},
): Promise<ServerTrust | undefined> {
  const program = options.program ?? 'molf';
  return resolveServerTrust({
    url,
    caFile: flags.tlsCa,
    fingerprint: flags.fingerprint,
    ask: askOnTerminal(),
    tell: (line) => process.stderr.write(`${program}: ${line}\n`),
    rememberCa: true,
    ...(options.store === undefined ? {} : { store: options.store }),
  });
}
