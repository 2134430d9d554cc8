import { safeParseJsonc } from '@molf/permissions';
import { z } from 'zod';
import { expandVariables } from './expand-variables.ts';

const enabled = z.boolean().default(true);

const StdioServerSchema = z.strictObject({
  type: z.literal('stdio'),
  command: z.string().min(1, 'the command cannot be empty'),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  enabled,
});

const HttpServerSchema = z.strictObject({
  type: z.literal('http'),
  url: z.string().min(1, 'the url cannot be empty'),
  headers: z.record(z.string(), z.string()).default({}),
  enabled,
});

/** `type` may be left out (as many `.mcp.json` files do): `command` means stdio, `url` means http. */
const ServerSchema = z.preprocess(
  (value) => {
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && !('type' in value)) {
      if ('command' in value) return { type: 'stdio', ...value };
      if ('url' in value) return { type: 'http', ...value };
    }
    return value;
  },
  z.discriminatedUnion('type', [StdioServerSchema, HttpServerSchema]),
);

export const McpConfigSchema = z.object({
  mcpServers: z.record(z.string().min(1), ServerSchema).default({}),
});

export type McpStdioServer = {
  name: string;
  type: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
};
export type McpHttpServer = { name: string; type: 'http'; url: string; headers: Record<string, string> };
export type McpServerConfig = McpStdioServer | McpHttpServer;

export type McpConfigResult =
  | { ok: true; servers: McpServerConfig[]; invalid: McpInvalidServer[] }
  | { ok: false; error: string };

/**
 * One enabled server: what runs (interpolated) and its definition as written, with the defaults
 * filled in (`type`, empty `args`…) but `${VAR}` left as it is. A person approves the definition
 * as written: interpolated values may be secrets, which must not reach rules or logs.
 */
export type McpConfigEntry = { config: McpServerConfig; definition: Record<string, unknown> };

/** An enabled server that cannot start as written (a variable it needs is not set): `reason` says why. */
export type McpInvalidServer = { name: string; type: McpServerConfig['type']; reason: string };

export type McpConfigEntriesResult =
  | {
      ok: true;
      entries: McpConfigEntry[];
      /** Servers the file names with `"enabled": false`: not started, listed as disabled. */
      disabled: Array<{ name: string; type: McpServerConfig['type'] }>;
      /** Servers that cannot start until the file or the worker's environment changes. */
      invalid: McpInvalidServer[];
    }
  | { ok: false; error: string };

/** The sentence for a server's unset variables, each with the first field that needs it. */
function describeMissing(name: string, missing: Array<{ variable: string; field: string }>): string {
  const one = missing.length === 1;
  const list = missing.map(({ variable, field }) => `${variable} (in ${field})`).join(', ');
  const example = missing[0]?.variable ?? 'VAR';
  return (
    `MCP server "${name}" cannot start: the environment ${one ? 'variable' : 'variables'} ${list} ` +
    `${one ? 'is' : 'are'} not set in the worker's environment: set ${one ? 'it' : 'them'} and restart the worker, ` +
    `or give a default in .mcp.json (\${${example}:-default})`
  );
}

/**
 * Reads a `.mcp.json` text: JSONC, every problem naming its place (`mcpServers.github.url`), `${VAR}`
 * and `${VAR:-default}` interpolated in command, args, env values, url and header values (never in
 * env keys), disabled servers left out, http URLs checked to be absolute. A server needing a
 * variable that is not set (and has no default) is listed in `invalid` instead of started.
 */
export function parseMcpConfig(
  text: string,
  options: { env: NodeJS.ProcessEnv; workdir: string; file?: string },
): McpConfigResult {
  const parsed = parseMcpConfigEntries(text, options);
  if (!parsed.ok) return parsed;
  return { ok: true, servers: parsed.entries.map((entry) => entry.config), invalid: parsed.invalid };
}

/** `parseMcpConfig`, keeping each server's definition as written next to what runs. */
export function parseMcpConfigEntries(
  text: string,
  options: { env: NodeJS.ProcessEnv; workdir: string; file?: string },
): McpConfigEntriesResult {
  const file = options.file ?? '.mcp.json';
  const read = safeParseJsonc(text);
  if (!read.ok) {
    const { line, column, code } = read.error;
    return { ok: false, error: `${file}: line ${line}, column ${column}: invalid JSON (${code})` };
  }
  const value = read.value;
  const parsed = McpConfigSchema.safeParse(value ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.map(String).join('.') ?? '';
    return { ok: false, error: `${file}: ${where === '' ? 'the file' : where}: ${issue?.message ?? 'invalid'}` };
  }
  const entries: McpConfigEntry[] = [];
  const disabled: Array<{ name: string; type: McpServerConfig['type'] }> = [];
  const invalid: McpInvalidServer[] = [];
  for (const [name, server] of Object.entries(parsed.data.mcpServers)) {
    if (!server.enabled) {
      disabled.push({ name, type: server.type });
      continue;
    }
    const { enabled: _enabled, ...definition } = server;
    const missing: Array<{ variable: string; field: string }> = [];
    const interpolate = (value: string, field: string): string => {
      const expanded = expandVariables(value, { env: options.env, workdir: options.workdir });
      for (const variable of expanded.missing) {
        if (!missing.some((known) => known.variable === variable)) missing.push({ variable, field });
      }
      return expanded.text;
    };
    const config: McpServerConfig =
      server.type === 'stdio'
        ? {
            name,
            type: 'stdio',
            command: interpolate(server.command, 'command'),
            args: server.args.map((arg, index) => interpolate(arg, `args.${index}`)),
            env: Object.fromEntries(
              Object.entries(server.env).map(([key, envValue]) => [key, interpolate(envValue, `env.${key}`)]),
            ),
          }
        : {
            name,
            type: 'http',
            url: interpolate(server.url, 'url'),
            headers: Object.fromEntries(
              Object.entries(server.headers).map(([key, header]) => [key, interpolate(header, `headers.${key}`)]),
            ),
          };
    if (missing.length > 0) {
      invalid.push({ name, type: server.type, reason: describeMissing(name, missing) });
      continue;
    }
    if (config.type === 'http' && (!URL.canParse(config.url) || !/^https?:$/.test(new URL(config.url).protocol))) {
      return { ok: false, error: `${file}: mcpServers.${name}.url: "${config.url}" is not an absolute http(s) URL` };
    }
    entries.push({ config, definition });
  }
  return { ok: true, entries, disabled, invalid };
}
