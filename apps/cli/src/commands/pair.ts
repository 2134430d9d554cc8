import type { Role } from '@molf/protocol';
import { type Command, Option } from 'commander';
import {
  addCredentialTargetOptions,
  parseCredentialName,
  parseRole,
  withParentTarget,
} from '../credentials/credential-options.ts';
import {
  describeRoles,
  formatPairingCodeTable,
  formatPairingInstructions,
  toPeerUrl,
} from '../credentials/format-credentials.ts';
import { type CredentialAdminOptions, openCredentialAdmin } from '../credentials/open-credential-admin.ts';
import { USAGE_EXIT_CODE } from '../exit-codes.ts';

type PairOptions = CredentialAdminOptions & { role?: Role; name?: string; urlForPeers?: string };

export function registerPairCommand(program: Command): void {
  const pair = addCredentialTargetOptions(
    program
      .command('pair')
      .description(
        'make a one-time code (5 minutes) that lets another machine join this server: a worker ' +
          '(molf worker --pair) or a person (molf login --pair); on the server machine, or with --server as an admin',
      )
      .addOption(
        new Option(
          '--role <role>',
          'what the credential may do: worker, admin, operator or viewer (required)',
        ).argParser(parseRole),
      )
      .addOption(
        new Option(
          '--name <name>',
          'the name of the credential the code becomes (default: the name the other machine gives, its host name)',
        ).argParser(parseCredentialName),
      )
      .addOption(
        new Option('--url-for-peers <url>', 'the server URL the other machine reaches, for the command shown'),
      ),
  ).action(async (options: PairOptions, command: Command) => {
    if (options.role === undefined) {
      command.error(`molf pair: say what the code is for with --role: ${describeRoles()}`, {
        exitCode: USAGE_EXIT_CODE,
      });
      return;
    }
    await using admin = await openCredentialAdmin(options);
    const made = await admin.createCode({
      role: options.role,
      ...(options.name === undefined ? {} : { name: options.name }),
    });
    const peer = toPeerUrl({
      urlForPeers: options.urlForPeers,
      serverUrl: admin.where.type === 'remote' ? admin.where.url : undefined,
    });
    // The cancel command names the same place, when a flag named it (an environment variable still does).
    const given = (key: string) => command.getOptionValueSource(key) === 'cli';
    const target = given('database')
      ? ' --database URL (the same database URL)'
      : given('server') && admin.where.type === 'remote'
        ? ` --server ${admin.where.url}`
        : given('dataDir') && admin.where.type === 'local'
          ? ` --data-dir ${admin.where.dataDir}`
          : '';
    process.stdout.write(formatPairingInstructions(made, peer, Date.now(), target));
  });

  addCredentialTargetOptions(
    pair.command('list').description('list the live pairing codes (never the codes themselves)'),
  )
    .option('--json', 'print JSON instead of a table')
    .action(async (options: CredentialAdminOptions & { json?: boolean }, command: Command) => {
      await using admin = await openCredentialAdmin(withParentTarget(options, command));
      const codes = await admin.listCodes();
      process.stdout.write(
        options.json === true ? `${JSON.stringify(codes, null, 2)}\n` : formatPairingCodeTable(codes, Date.now()),
      );
    });

  addCredentialTargetOptions(
    pair
      .command('cancel')
      .description('end a live pairing code before it expires')
      .argument('<id>', 'the id `molf pair` and `molf pair list` show'),
  ).action(async (id: string, options: CredentialAdminOptions, command: Command) => {
    await using admin = await openCredentialAdmin(withParentTarget(options, command));
    await admin.cancelCode(id);
    process.stdout.write(`cancelled pairing code ${id}\n`);
  });
}
