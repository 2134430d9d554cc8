import { createHash } from 'node:crypto';

/** Providers accept tool names of at most 64 characters of `A–Z a–z 0–9 _ -`. */
export const MAX_TOOL_NAME_CHARS = 64;

export function sanitizeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

function shortHash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** `{server}_{tool}`, sanitised; a longer one is cut and given a hash of the whole, so it stays unique and stable. */
export function qualifyToolName(server: string, tool: string): string {
  const full = `${sanitizeName(server)}_${sanitizeName(tool)}`;
  if (full.length <= MAX_TOOL_NAME_CHARS) return full;
  return `${full.slice(0, MAX_TOOL_NAME_CHARS - 9)}_${shortHash(full, 8)}`;
}

export type NamedTool = { server: string; tool: string; name: string };

/**
 * Names every MCP tool so that none shadows a built-in or another server's tool: servers in name
 * order, tools in the order listed; a duplicate within a server is dropped, a collision with a name
 * already taken gets a hash suffix. Same inputs, same names.
 */
export function assignToolNames(options: {
  reserved: Iterable<string>;
  servers: ReadonlyArray<{ server: string; tools: readonly string[] }>;
}): { tools: NamedTool[]; warnings: string[] } {
  const taken = new Set(options.reserved);
  const tools: NamedTool[] = [];
  const warnings: string[] = [];
  const servers = [...options.servers].sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
  for (const { server, tools: names } of servers) {
    const ownNames = new Set<string>();
    for (const tool of names) {
      let name = qualifyToolName(server, tool);
      if (ownNames.has(name)) {
        warnings.push(
          `MCP server ${server}: tool "${tool}" has the same name as another of its tools (${name}); dropped`,
        );
        continue;
      }
      ownNames.add(name);
      if (taken.has(name)) {
        // A renamed tool must not take another's name either: try further hashes until one is free.
        let renamed = name;
        for (let attempt = 0; taken.has(renamed); attempt += 1) {
          renamed = `${name.slice(0, MAX_TOOL_NAME_CHARS - 7)}_${shortHash(`${server}\u0000${tool}\u0000${attempt}`, 6)}`;
        }
        warnings.push(`MCP server ${server}: tool "${tool}" would be named ${name}, which is taken; it is ${renamed}`);
        name = renamed;
      }
      taken.add(name);
      tools.push({ server, tool, name });
    }
  }
  return { tools, warnings };
}
