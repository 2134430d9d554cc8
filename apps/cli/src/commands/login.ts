import { hostname } from 'node:os';
import { redeemPairingCode, type ServerTrust } from '@molf/client/node';
import { MolfError, type Role } from '@molf/protocol';
import { type Command, Option } from 'commander';
import { connectClient } from '../connect-client.ts';
import { parseCredentialName } from '../credentials/credential-options.ts';
import { toCredentialName } from '../credentials/to-credential-name.ts';
import { savedLogins } from '../remote/saved-logins.ts';
import { serverKey } from '../remote/server-key.ts';
import {
  addServerTrustOptions,
  type ServerTrustFlags,
  verifyServerForCommand,
} from '../remote/server-trust-options.ts';
import { resolveTokenOption } from '../resolve-token-option.ts';
import { showOnOneLine } from '../terminal/show-on-one-line.ts';

type LoginOptions = ServerTrustFlags & {
  pair?: string;
  token?: string;
  tokenFile?: string;
  name?: string;
  default: boolean;
};

export function registerLoginCommand(program: Command): void {
  const command = program
    .command('login')
    .description(
      'log this machine in to a Molf server: trade a pairing code (or save a given token) for a client credential, ' +
        'verify the server, and make it the default for client commands',
    )
    .argument('<url>', 'the server, e.g. wss://molf.example.org:7600')
    .addOption(
      new Option('--pair <code>', 'a pairing code from `molf pair --role operator|viewer|admin` on the server'),
    )
    .addOption(new Option('--token-file <path>', 'a client token in a file, instead of a pairing code'))
    .addOption(new Option('--token <token>', 'a client token (visible in ps: prefer --token-file)'))
    .addOption(
      new Option('--name <name>', "this machine's name on the server (default: its host name)").argParser(
        parseCredentialName,
      ),
    )
    .option('--no-default', 'save the login without making this server the default');
  addServerTrustOptions(command).action(async (url: string, options: LoginOptions) => {
    serverKey(url);
    const trust = await verifyServerForCommand(url, options);
    const token = await loginToken(url, options, trust);
    // The credential is proven before it is saved: the server says who it is.
    await using client = await connectClient({ url, token, ...(trust === undefined ? {} : { trust }) });
    const whoami = await client.rpc.auth.whoami.query();
    if (whoami.role === 'worker') {
      throw new MolfError(
        'invalid_input',
        'that is a worker token: log in with a client credential (molf pair --role operator), and give worker tokens to `molf worker`',
      );
    }
    const logins = savedLogins();
    await logins.save(
      url,
      {
        token,
        role: whoami.role,
        name: whoami.name ?? '',
        credentialId: whoami.credentialId ?? '',
        savedAt: new Date().toISOString(),
      },
      { makeDefault: options.default },
    );
    process.stdout.write(
      `logged in to ${serverKey(url)} as ${whoami.name === undefined ? '' : `"${showOnOneLine(whoami.name)}", `}${describeRole(whoami.role)}; ` +
        `saved in ${logins.path}${options.default ? ' (the default server for client commands)' : ''}\n`,
    );
  });
}

export function registerLogoutCommand(program: Command): void {
  program
    .command('logout')
    .description(
      "forget this machine's saved login to a server (the credential stays valid until revoked on the server)",
    )
    .argument('[url]', 'the server (default: the default one)')
    .action(async (url: string | undefined) => {
      const logins = savedLogins();
      const target = url ?? (await logins.defaultLogin())?.url;
      if (target === undefined || !(await logins.remove(target))) {
        process.stderr.write(`molf: no saved login${target === undefined ? '' : ` for ${serverKey(target)}`}\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(
        `forgot the login to ${serverKey(target)}; to make its token useless, revoke it on the server (molf token list, molf token revoke ID)\n`,
      );
    });
}

async function loginToken(url: string, options: LoginOptions, trust: ServerTrust | undefined): Promise<string> {
  const given = await resolveTokenOption({
    value: options.token,
    file: options.tokenFile,
    flags: ['--token', '--token-file'],
  });
  if (given?.warning !== undefined) process.stderr.write(`molf: ${given.warning}\n`);
  if (options.pair !== undefined) {
    if (given !== undefined) throw new MolfError('config_invalid', 'give --pair or a token, not both');
    const credential = await redeemPairingCode({
      url,
      code: options.pair,
      kind: 'client',
      name: options.name ?? toCredentialName(hostname(), 'client'),
      ...(trust === undefined ? {} : { trust }),
    });
    return credential.token;
  }
  if (given === undefined) {
    throw new MolfError(
      'invalid_input',
      'give --pair CODE (run `molf pair --role operator` on the server to get one) or --token-file PATH',
    );
  }
  return given.token;
}

function describeRole(role: Role): string {
  switch (role) {
    case 'admin':
      return 'an admin';
    case 'operator':
      return 'an operator (drive sessions, answer approvals)';
    case 'viewer':
      return 'a viewer (read only)';
    case 'worker':
      return 'a worker';
    default:
      return role satisfies never;
  }
}
