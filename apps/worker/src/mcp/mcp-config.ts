import { safeParseJsonc } from '@molf/permissions';
import { z } from 'zod';

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
  | { ok: true; servers: McpServerConfig[]; warnings: string[] }
  | { ok: false; error: string };

/**
 * One enabled server: what runs (interpolated) and its definition as written, with the defaults
 * filled in (`type`, empty `args`…) but `${VAR}` left as it is. A person approves the definition
 * as written: interpolated values may be secrets, which must not reach rules or logs.
 */
export type McpConfigEntry = { config: McpServerConfig; definition: Record<string, unknown> };

export type McpConfigEntriesResult =
  | {
      ok: true;
      entries: McpConfigEntry[];
      /** Servers the file names with `"enabled": false`: not started, listed as disabled. */
      disabled: Array<{ name: string; type: McpServerConfig['type'] }>;
      warnings: string[];
    }
  | { ok: false; error: string };

/**
 * `${VAR}` from the environment (and `${WORKDIR}`); a missing variable becomes "" with one
 * warning per variable.
 */
function createInterpolator(options: { env: NodeJS.ProcessEnv; workdir: string; warnings: string[] }) {
  const warned = new Set<string>();
  return (value: string, where: string): string =>
    value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
      if (name === 'WORKDIR') return options.workdir;
      const found = options.env[name];
      if (found !== undefined) return found;
      if (!warned.has(name)) {
        warned.add(name);
        options.warnings.push(`${where}: the environment variable ${name} is not set; using ""`);
      }
      return '';
    });
}

/**
 * Reads a `.mcp.json` text: JSONC, every problem naming its place (`mcpServers.github.url`), `${VAR}`
 * interpolated in command, args, env values, url and header values (never in env keys), disabled
 * servers left out, http URLs checked to be absolute.
 */
export function parseMcpConfig(
  text: string,
  options: { env: NodeJS.ProcessEnv; workdir: string; file?: string },
): McpConfigResult {
  const parsed = parseMcpConfigEntries(text, options);
  if (!parsed.ok) return parsed;
  return { ok: true, servers: parsed.entries.map((entry) => entry.config), warnings: parsed.warnings };
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
  const warnings: string[] = [];
  const interpolate = createInterpolator({ env: options.env, workdir: options.workdir, warnings });
  const entries: McpConfigEntry[] = [];
  const disabled: Array<{ name: string; type: McpServerConfig['type'] }> = [];
  for (const [name, server] of Object.entries(parsed.data.mcpServers)) {
    if (!server.enabled) {
      disabled.push({ name, type: server.type });
      continue;
    }
    const { enabled: _enabled, ...definition } = server;
    const at = `mcpServers.${name}`;
    if (server.type === 'stdio') {
      const config: McpServerConfig = {
        name,
        type: 'stdio',
        command: interpolate(server.command, `${at}.command`),
        args: server.args.map((arg, index) => interpolate(arg, `${at}.args.${index}`)),
        env: Object.fromEntries(
          Object.entries(server.env).map(([key, envValue]) => [key, interpolate(envValue, `${at}.env.${key}`)]),
        ),
      };
      entries.push({ config, definition });
      continue;
    }
    const url = interpolate(server.url, `${at}.url`);
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      return { ok: false, error: `${file}: ${at}.url: "${url}" is not an absolute http(s) URL` };
    }
    const config: McpServerConfig = {
      name,
      type: 'http',
      url,
      headers: Object.fromEntries(
        Object.entries(server.headers).map(([key, header]) => [key, interpolate(header, `${at}.headers.${key}`)]),
      ),
    };
    entries.push({ config, definition });
  }
  return { ok: true, entries, disabled, warnings };
}
