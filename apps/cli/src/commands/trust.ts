import { MolfError } from '@molf/protocol';
import type { Command } from 'commander';
import { knownServers } from '../remote/known-servers.ts';
import { serverKey } from '../remote/server-key.ts';
import {
  addServerTrustOptions,
  type ServerTrustFlags,
  verifyServerForCommand,
} from '../remote/server-trust-options.ts';

type TrustOptions = ServerTrustFlags & { forget?: boolean; list?: boolean };

export function registerTrustCommand(program: Command): void {
  const command = program
    .command('trust')
    .description(
      "verify a wss:// server's certificate and pin it (or its CA) for this machine; --forget drops a pin, --list shows them",
    )
    .argument('[url]', 'the server, e.g. wss://molf.example.org:7600')
    .option('--forget', "forget the server's pinned certificate or CA (after `molf server --renew-cert`)")
    .option('--list', 'list the servers this machine trusts and how');
  addServerTrustOptions(command).action(async (url: string | undefined, options: TrustOptions) => {
    const store = knownServers();
    if (options.list === true) {
      const known = await store.list();
      if (known.length === 0) process.stdout.write('no servers pinned\n');
      for (const entry of known) {
        process.stdout.write(
          entry.type === 'pinned'
            ? `${entry.server}  pinned SHA-256 ${entry.fingerprint256}  since ${entry.pinnedAt.slice(0, 10)}, valid until ${entry.validTo.slice(0, 10)}\n`
            : `${entry.server}  CA file ${entry.caFile}\n`,
        );
      }
      return;
    }
    if (url === undefined) throw new MolfError('invalid_input', 'give the server URL, e.g. molf trust wss://HOST:7600');
    const key = serverKey(url);
    if (options.forget === true) {
      const had = await store.forget(url);
      process.stdout.write(had ? `forgot how to trust ${key}\n` : `nothing was pinned for ${key}\n`);
      return;
    }
    if (key.startsWith('ws:')) {
      throw new MolfError('invalid_input', `${key} is a plain ws:// server: there is no certificate to trust`);
    }
    // A new fingerprint replaces an old pin only when the person names it.
    const existing = await store.get(url);
    if (existing?.type === 'pinned' && options.fingerprint !== undefined) await store.forget(url);
    const trust = await verifyServerForCommand(url, options, { store }).catch(async (error: unknown) => {
      // A refused new fingerprint keeps the old pin: the person's earlier decision stands.
      if (existing !== undefined && (await store.get(url)) === undefined) await store.set(url, existing);
      throw error;
    });
    switch (trust?.type) {
      case 'pinned': {
        const replaced =
          existing?.type === 'pinned' && existing.fingerprint256 !== trust.fingerprint256
            ? ` (it replaces the pin of ${existing.pinnedAt.slice(0, 10)}, SHA-256 ${existing.fingerprint256})`
            : '';
        process.stdout.write(
          `${key} is trusted: its certificate SHA-256 ${trust.fingerprint256} is pinned${replaced}\n`,
        );
        break;
      }
      case 'ca':
        process.stdout.write(`${key} is trusted through the CA file\n`);
        break;
      case 'system':
        process.stdout.write(`${key} is trusted through this system's certificate authorities; nothing to pin\n`);
        break;
      default:
        break;
    }
  });
}
