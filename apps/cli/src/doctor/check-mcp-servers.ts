import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseMcpConfigEntries } from '@molf/worker';
import type { DoctorCheck } from './doctor-check.ts';
import { findExecutable } from './find-executable.ts';

const CONFIG_FILE = '.mcp.json';

/**
 * The MCP servers a worker on `workdir` would start, from its `.mcp.json` as the worker reads it
 * (JSONC, `${VAR}` interpolated from this environment): the file parses, each stdio server's
 * command exists (on PATH, or as a path from the workdir) and each URL server's URL is an absolute
 * http(s) URL. An http server's URL is shown by its origin only: its path or query may hold a key.
 */
export async function checkMcpServers(options: { workdir: string; env: NodeJS.ProcessEnv }): Promise<DoctorCheck[]> {
  const file = join(options.workdir, CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return [{ id: 'mcp', status: 'skipped', summary: `no ${CONFIG_FILE} in ${options.workdir}: no MCP servers` }];
    }
    return [
      {
        id: 'mcp',
        status: 'error',
        summary: `${file} cannot be read: ${(error as Error).message}`,
        fix: `ls -l ${file}`,
      },
    ];
  }
  const parsed = parseMcpConfigEntries(text, { env: options.env, workdir: options.workdir, file });
  if (!parsed.ok) {
    return [
      {
        id: 'mcp',
        status: 'error',
        summary: `${parsed.error}; a worker here starts no MCP server`,
        fix: `correct ${file} there (\`molf mcp list\` shows what a worker would start)`,
      },
    ];
  }
  // A server needing a variable this environment lacks (the worker's, when started from here).
  const checks: DoctorCheck[] = parsed.invalid.map(({ name, reason }) => ({
    id: `mcp:${name}`,
    status: 'error',
    summary: reason,
    fix: `set the variable where the worker runs and restart it, or give a default in ${file}: \${VAR:-default}`,
  }));
  for (const { config } of parsed.entries) {
    const id = `mcp:${config.name}`;
    if (config.type === 'http') {
      checks.push({ id, status: 'ok', summary: `MCP server ${config.name}: ${new URL(config.url).origin} (http)` });
      continue;
    }
    const lookup = await findExecutable(config.command, { env: options.env, cwd: options.workdir });
    if (lookup.found) {
      checks.push({ id, status: 'ok', summary: `MCP server ${config.name}: ${config.command} (${lookup.path})` });
      continue;
    }
    const where = `mcpServers.${config.name}.command in ${file}`;
    checks.push(
      lookup.reason === 'not_executable'
        ? {
            id,
            status: 'error',
            summary: `MCP server ${config.name}: ${lookup.path} is not an executable file`,
            fix: `chmod +x ${lookup.path}, or correct ${where}`,
          }
        : {
            id,
            status: 'error',
            summary: `MCP server ${config.name}: command ${config.command} ${lookup.reason === 'missing' ? `does not exist (${lookup.path})` : 'is not on PATH'}`,
            fix: `install ${config.command}, or correct ${where}`,
          },
    );
  }
  for (const { name } of parsed.disabled) {
    checks.push({ id: `mcp:${name}`, status: 'skipped', summary: `MCP server ${name}: disabled in ${CONFIG_FILE}` });
  }
  if (checks.length === 0) checks.push({ id: 'mcp', status: 'skipped', summary: `${file} names no MCP server` });
  return checks;
}
