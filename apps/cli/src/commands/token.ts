import { MolfError, type Role } from '@molf/protocol';
import { type Command, Option } from 'commander';
import { addCredentialTargetOptions, parseCredentialName, parseRole } from '../credentials/credential-options.ts';
import { formatCredentialTable } from '../credentials/format-credentials.ts';
import { type CredentialAdminOptions, openCredentialAdmin } from '../credentials/open-credential-admin.ts';
import { showOnOneLine } from '../terminal/show-on-one-line.ts';

const DEFAULT_NAME = 'created with molf token create';

export function registerTokenCommand(program: Command): void {
  const token = program
    .command('token')
    .description(
      "the server's stored credentials: list, create or revoke them, on the server machine or with --server as an admin (no restart needed)",
    );

  addCredentialTargetOptions(
    token
      .command('create')
      .description('mint a new token; it is printed once and only its hash is stored')
      .addOption(
        new Option(
          '--role <role>',
          'admin (everything), operator (drive sessions, answer approvals), viewer (read only) or worker',
        )
          .makeOptionMandatory()
          .argParser(parseRole),
      )
      .addOption(
        new Option('--name <name>', `a name to recognise the credential by (default: "${DEFAULT_NAME}")`).argParser(
          parseCredentialName,
        ),
      )
      .addOption(new Option('--label <name>', 'the same as --name').argParser(parseCredentialName).hideHelp()),
  ).action(async (options: CredentialAdminOptions & { role: Role; name?: string; label?: string }) => {
    await using admin = await openCredentialAdmin(options);
    const name = options.name ?? options.label ?? DEFAULT_NAME;
    const { token: value, credential } = await admin.createToken({ role: options.role, name });
    process.stdout.write(`${options.role} token ${credential.id}: ${value}\n`);
  });

  addCredentialTargetOptions(
    token
      .command('list')
      .description('list stored credentials: id, role, name, when made and last used, how made (never the tokens)'),
  )
    .option('--json', 'print JSON instead of a table')
    .action(async (options: CredentialAdminOptions & { json?: boolean }) => {
      await using admin = await openCredentialAdmin(options);
      const credentials = await admin.listTokens();
      process.stdout.write(
        options.json === true
          ? `${JSON.stringify(credentials, null, 2)}\n`
          : formatCredentialTable(credentials, Date.now()),
      );
    });

  addCredentialTargetOptions(
    token
      .command('revoke')
      .description('delete a stored credential; its open connections are closed and new ones refused')
      .argument('<id>', 'credential id from `molf token list`')
      .option('--yes', 'revoke even the credential this command connects with (you lose this login)'),
  ).action(async (id: string, options: CredentialAdminOptions & { yes?: boolean }) => {
    await using admin = await openCredentialAdmin(options);
    // Revoking the credential that does the revoking, through a server, locks this person out of it.
    if (admin.where.type === 'remote' && options.yes !== true) {
      const own = (await admin.listTokens()).find((credential) => credential.id === id && credential.current);
      if (own !== undefined) {
        throw new MolfError(
          'invalid_input',
          `${id} ("${showOnOneLine(own.name)}") is the credential this command connects with: revoking it ends this login ` +
            'and, if it is your only admin credential, your remote administration (the server machine can always mint ' +
            'another). Add --yes to revoke it anyway.',
          { field: 'id' },
        );
      }
    }
    await admin.revokeToken(id);
    process.stdout.write(`revoked ${id}\n`);
  });
}
