import { createHash } from 'node:crypto';
import { escapeGlob } from './permission-rule.ts';
import type { ToolCallSubjects } from './tool-call-subjects.ts';

/**
 * The rule key under which starting an MCP server of `.mcp.json` is approved. Writing `.mcp.json`
 * is a file write, but the worker's hot reload turns it into starting a process, so each server
 * is approved on its own. A dot never occurs in a qualified MCP tool name, so no tool shares it.
 */
export const MCP_SERVER_TOOL = 'mcp.server';

/** One server of `.mcp.json`: its name and its definition as written (before `${VAR}` interpolation). */
export type McpServerDefinition = { name: string; definition: Readonly<Record<string, unknown>> };

/** Hex digits of the definition's SHA-256 in a subject: enough to tell versions apart, short to read. */
const DIGEST_CHARS = 12;

/** Control characters and the bidirectional marks and overrides that can make a text read as another. */
function isHidden(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function hasHidden(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) if (isHidden(text.charCodeAt(index))) return true;
  return false;
}

/** Hidden characters as visible escapes (`\n`, `\x1b`, `\u202e`), so that what is shown is all there is. */
function escapeHidden(text: string): string {
  let escaped = '';
  for (const char of text) {
    const code = char.charCodeAt(0);
    if (!isHidden(code)) escaped += char;
    else if (char === '\n') escaped += '\\n';
    else if (char === '\t') escaped += '\\t';
    else
      escaped += code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return escaped;
}

const BARE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One word as a POSIX shell would need it written, so that the shown line is the line that runs. */
function quoteWord(word: string): string {
  if (BARE_WORD.test(word)) return word;
  if (!hasHidden(word)) return `'${word.replaceAll("'", `'\\''`)}'`;
  return `$'${escapeHidden(word.replaceAll('\\', '\\\\').replaceAll("'", "\\'"))}'`;
}

/** JSON with object keys sorted at every level: the same definition always gives the same text. */
function toCanonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(toCanonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, entry]) => entry !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${toCanonicalJson(entry)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The names of an object's keys, sorted and made visible (their values may be secrets). */
function namesOf(value: unknown): string[] {
  return isRecord(value) ? Object.keys(value).sort().map(escapeHidden) : [];
}

/**
 * What the server runs, as people read it: the command line of a stdio server with the names of
 * the variables it sets (`NODE_OPTIONS=… node x.js`: a variable can change what runs as much as an
 * argument) and its directory; the URL of an HTTP one with the names of its headers.
 */
function describeTarget(definition: Readonly<Record<string, unknown>>): string {
  const { command, args, url, env, cwd, headers } = definition;
  if (typeof command === 'string') {
    const words = Array.isArray(args) ? args.map(String) : [];
    const line = [...namesOf(env).map((name) => `${name}=…`), ...[command, ...words].map(quoteWord)].join(' ');
    return typeof cwd === 'string' ? `cd ${quoteWord(cwd)} && ${line}` : line;
  }
  if (typeof url === 'string') {
    const names = namesOf(headers);
    return names.length === 0 ? escapeHidden(url) : `${escapeHidden(url)} (headers ${names.join(', ')})`;
  }
  return '(no command or url)';
}

/**
 * What a person approves when a server of `.mcp.json` is to start, and what an "always" rule
 * matches: `files: API_KEY=… npx -y @modelcontextprotocol/server-filesystem '${WORKDIR}' #1a2b3c4d5e6f`.
 * The command line (or URL) is shown as written with the names of its variables (or headers); the
 * digest covers the name and the whole definition as written (env, headers, type and any other
 * field), so that a changed definition asks again while env and header values, which may be
 * secrets, never appear in a subject, a rule or the audit log.
 */
export function toMcpServerSubject(server: McpServerDefinition): string {
  // The name is hashed too: two names shown alike (escapes) can never share a rule.
  const hashed = toCanonicalJson({ name: server.name, definition: server.definition });
  const digest = createHash('sha256').update(hashed).digest('hex').slice(0, DIGEST_CHARS);
  return `${escapeHidden(server.name)}: ${describeTarget(server.definition)} #${digest}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The subjects of an `mcp.server` approval, from its arguments `{ name, definition }`. */
export function toMcpServerSubjects(args: Record<string, unknown>): ToolCallSubjects {
  const { name, definition } = args;
  if (typeof name !== 'string' || !isRecord(definition)) {
    return { subjects: [], problems: ['the request names no MCP server definition ({ name, definition })'] };
  }
  const label = toMcpServerSubject({ name, definition });
  return { subjects: [{ kind: 'name', label, forms: [label], alwaysPattern: escapeGlob(label) }], problems: [] };
}
