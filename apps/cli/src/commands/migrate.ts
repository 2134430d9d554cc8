import { createSilentLogger } from '@molf/logging';
import { type CopyReport, checkCopy, copyDataDir, DATABASE_URL_ENV, openDatabase } from '@molf/server';
import { type Command, Option } from 'commander';
import { USAGE_EXIT_CODE } from '../exit-codes.ts';

type MigrateOptions = { database?: string; fromFiles?: string; to?: string };

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description(
      "bring a PostgreSQL database's schema up to this version, or copy a data dir (sessions, credentials, " +
        'workers, permissions, cron jobs) into one, keeping every id; run it again safely',
    )
    .addOption(
      new Option('--database <url>', 'the database whose schema to bring up to date (postgres://…)').env(
        DATABASE_URL_ENV,
      ),
    )
    .addOption(new Option('--from-files <dir>', "a stopped server's data directory to copy (with --to)"))
    .addOption(new Option('--to <url>', 'the database to copy into (postgres://…); its schema is brought up first'))
    .action(async (options: MigrateOptions, command: Command) => {
      const logger = createSilentLogger();
      if (options.fromFiles !== undefined) {
        if (options.to === undefined) {
          command.error('molf migrate: --from-files needs --to postgres://… (the database to copy into)', {
            exitCode: USAGE_EXIT_CODE,
          });
        }
        const database = await openDatabase({ url: options.to as string, logger, schema: 'migrate' });
        try {
          process.stdout.write(`copying ${options.fromFiles} into ${database.name} …\n`);
          const report = await copyDataDir({ dataDir: options.fromFiles, database, logger });
          process.stdout.write(formatCopyReport(report));
          checkCopy(report);
          process.stdout.write('verified: the database holds everything the data directory holds\n');
        } finally {
          await database.close();
        }
        return;
      }
      const url = options.database ?? options.to;
      if (url === undefined) {
        command.error(`molf migrate: name the database: --database postgres://… (or ${DATABASE_URL_ENV})`, {
          exitCode: USAGE_EXIT_CODE,
        });
      }
      const database = await openDatabase({ url: url as string, logger, schema: 'migrate' });
      try {
        const { from, to, applied } = database.schema;
        process.stdout.write(
          applied.length === 0
            ? `${database.name}: the schema is at version ${to} already\n`
            : `${database.name}: schema brought from version ${from} to ${to} (${applied.map((step) => step.name).join('; ')})\n`,
        );
      } finally {
        await database.close();
      }
    });
}

export function formatCopyReport(report: CopyReport): string {
  const line = (what: string, figures: { source: number; copied: number; inDatabase?: number }) =>
    `  ${what.padEnd(15)} ${String(figures.source).padStart(7)} in the data dir, ${String(figures.copied).padStart(7)} copied now` +
    (figures.inDatabase === undefined ? '' : `, ${figures.inDatabase} in the database`);
  return [
    line('sessions', report.sessions),
    line('messages', report.messages),
    line('attachments', report.attachments),
    line('queued prompts', report.queuedPrompts),
    line('documents', report.documents),
    line('audit records', report.auditRecords),
    ...report.damaged.map(({ sessionId, reason }) => `  not copied: session ${sessionId} is damaged: ${reason}`),
    ...report.documents.conflicts.map(
      (name) => `  not copied: ${name}: the database has its own, which differs from the data dir's`,
    ),
    '',
  ].join('\n');
}
