import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { dataDirOption } from '../cli-options.ts';
import { cliVersionLine } from '../cli-version-line.ts';
import { currentMolfPaths } from '../current-molf-paths.ts';
import { formatDoctorReport } from '../doctor/format-doctor-report.ts';
import { runDoctor } from '../doctor/run-doctor.ts';
import { styleFor } from '../terminal/terminal-style.ts';

type DoctorFlags = { workdir: string; dataDir?: string; config?: string; json?: boolean };

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      'check what Molf needs here (Node.js, ripgrep, bubblewrap, the saved server, private directories, ' +
        "provider keys, the project's MCP servers) and say how to fix each problem; exits 1 if one is broken",
    )
    .addOption(
      new Option('--workdir <dir>', 'the project whose .mcp.json and saved connection are checked').default(
        process.cwd(),
        'current directory',
      ),
    )
    .addOption(dataDirOption())
    .addOption(new Option('--config <file>', 'the server config file to check').env('MOLF_CONFIG'))
    .option('--json', 'print the checks as JSON: { version, healthy, checks: [{ id, status, summary, fix? }] }')
    .action(async (flags: DoctorFlags) => {
      const version = cliVersionLine();
      const checks = await runDoctor({
        workdir: resolve(flags.workdir),
        paths: currentMolfPaths({ dataDir: flags.dataDir }),
        configFile: flags.config,
        env: process.env,
      });
      const healthy = checks.every((check) => check.status !== 'error');
      process.stdout.write(
        flags.json === true
          ? `${JSON.stringify({ version, healthy, checks }, null, 2)}\n`
          : formatDoctorReport({ version, checks, style: styleFor(process.stdout) }),
      );
      if (!healthy) process.exitCode = 1;
    });
}
