import { type Role, RoleSchema } from '@molf/protocol';
import { openCredentialStore } from '@molf/server';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { dataDirOption } from '../cli-options.ts';
import { currentMolfPaths } from '../current-molf-paths.ts';

export function registerTokenCommand(program: Command): void {
  const token = program
    .command('token')
    .description(
      "manage the server's stored credentials (run on the server's machine; takes effect without a restart)",
    );

  token
    .command('create')
    .description('mint a new token; it is printed once and only its hash is stored')
    .addOption(
      new Option(
        '--role <role>',
        'admin (everything), operator (drive sessions, answer approvals), viewer (read only) or worker',
      )
        .makeOptionMandatory()
        .argParser((value) => {
          const parsed = RoleSchema.safeParse(value);
          if (!parsed.success) throw new InvalidArgumentError('use admin, operator, viewer or worker');
          return parsed.data;
        }),
    )
    .option('--label <label>', 'a note to recognise the token by', 'created with molf token create')
    .addOption(dataDirOption())
    .action(async (options: { role: Role; label: string; dataDir?: string }) => {
      const store = openCredentialStore({ dataDir: currentMolfPaths(options).dataDir });
      const { token: value, credential } = await store.create({ role: options.role, label: options.label });
      process.stdout.write(`${options.role} token ${credential.id}: ${value}\n`);
    });

  token
    .command('list')
    .description('list stored credentials (ids, roles, labels — never the tokens)')
    .addOption(dataDirOption())
    .action((options: { dataDir?: string }) => {
      const store = openCredentialStore({ dataDir: currentMolfPaths(options).dataDir });
      const credentials = store.list();
      if (credentials.length === 0) process.stdout.write('no stored credentials\n');
      for (const credential of credentials) {
        process.stdout.write(
          `${credential.id}  ${credential.role.padEnd(8)}  ${credential.createdAt}  ${credential.label}\n`,
        );
      }
    });

  token
    .command('revoke')
    .description('delete a stored credential; new connections with it are refused')
    .argument('<id>', 'credential id from `molf token list`')
    .addOption(dataDirOption())
    .action(async (id: string, options: { dataDir?: string }) => {
      const store = openCredentialStore({ dataDir: currentMolfPaths(options).dataDir });
      if (!(await store.revoke(id))) {
        process.stderr.write(`molf: no credential with id ${id}\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(`revoked ${id}\n`);
    });
}
