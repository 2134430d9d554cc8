import { CredentialNameSchema, type Role, RoleSchema } from '@molf/protocol';
import { DATABASE_URL_ENV } from '@molf/server';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { dataDirOption, serverUrlOption } from '../cli-options.ts';
import { describeRoles } from './format-credentials.ts';

export function parseRole(value: string): Role {
  const parsed = RoleSchema.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError(`use one of: ${describeRoles()}`);
  return parsed.data;
}

/** A credential's name: 1 to 64 characters, no control characters. */
export function parseCredentialName(value: string): string {
  const parsed = CredentialNameSchema.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError(parsed.error.issues[0]?.message ?? 'not a valid name');
  return parsed.data;
}

/**
 * Where a credential command works: the data directory here (default), the database several
 * servers share with `--database`, or a running server through an admin's connection with `--server`.
 */
export function addCredentialTargetOptions(command: Command): Command {
  return command
    .addOption(serverUrlOption())
    .addOption(new Option('--token <token>', 'an admin client token, with --server').env('MOLF_CLIENT_TOKEN'))
    .addOption(
      new Option(
        '--database <url>',
        'the PostgreSQL database of servers started with --database (their credentials are kept there, not in the data directory)',
      ).env(DATABASE_URL_ENV),
    )
    .addOption(dataDirOption());
}

const TARGET_KEYS = ['server', 'token', 'database', 'dataDir'] as const;

/**
 * A subcommand's target options with those given on the command line to its parent: `molf pair`
 * takes them too, and commander gives `molf pair list --data-dir D` to `pair`, not to `list`.
 */
export function withParentTarget<T extends Record<string, unknown>>(options: T, command: Command): T {
  const parent = command.parent;
  if (parent === null) return options;
  const merged: Record<string, unknown> = { ...options };
  for (const key of TARGET_KEYS) {
    if (parent.getOptionValueSource(key) === 'cli' && command.getOptionValueSource(key) !== 'cli') {
      merged[key] = parent.opts()[key];
    }
  }
  return merged as T;
}
