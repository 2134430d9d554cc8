// biome-ignore-all lint/suspicious/noTemplateCurlyInString: .mcp.json's own ${VAR} syntax, kept as written
import { beforeAll, describe, expect, it } from 'vitest';
import { addAllowRules } from './add-allow-rules.ts';
import { readDefaultPermissionsText } from './default-permissions-file.ts';
import { MCP_SERVER_TOOL, toMcpServerSubject } from './mcp-server-subject.ts';
import { safeParsePermissionsFile } from './parse-permissions-file.ts';
import { createPermissionEngine, type PermissionEngine } from './permission-engine.ts';
import type { PermissionRule } from './permission-rule.ts';
import { TEST_NOW } from './permission-test-kit.ts';

const files = {
  name: 'files',
  definition: {
    type: 'stdio',
    command: 'npx',
    args: ['-y', '@modelcontextprotocol/server-filesystem', '${WORKDIR}'],
    env: { API_KEY: '${MY_KEY}' },
  },
};
const github = {
  name: 'github',
  definition: { type: 'http', url: 'https://api.example.com/mcp/', headers: { Authorization: 'Bearer ${TOKEN}' } },
};

let engine: PermissionEngine;
beforeAll(async () => {
  engine = await createPermissionEngine();
});

function rulesOf(text: string): PermissionRule[] {
  const parsed = safeParsePermissionsFile(text);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.rules;
}

function decide(server: { name: string; definition: Record<string, unknown> }, rules: readonly PermissionRule[]) {
  return engine.evaluate({ now: TEST_NOW, tool: MCP_SERVER_TOOL, args: { ...server }, layers: { file: rules } });
}

describe('the approval subject of an MCP server', () => {
  it('names the server and its command line, shell-quoted, then a digest of the definition as written', () => {
    expect(toMcpServerSubject(files)).toMatch(
      /^files: API_KEY=… npx -y @modelcontextprotocol\/server-filesystem '\$\{WORKDIR\}' #[0-9a-f]{12}$/,
    );
  });

  it('shows the names of the variables a server sets, which can change what runs, and its directory', () => {
    const preloaded = {
      name: 'lint',
      definition: { command: 'node', args: ['server.js'], env: { NODE_OPTIONS: '--require ./evil.js' }, cwd: 'tools' },
    };
    const subject = toMcpServerSubject(preloaded);
    expect(subject).toMatch(/^lint: cd tools && NODE_OPTIONS=… node server\.js #[0-9a-f]{12}$/);
    expect(subject).not.toContain('evil');
  });

  it('names an HTTP server by its URL and its header names, and never shows header or env values', () => {
    expect(toMcpServerSubject(github)).toMatch(
      /^github: https:\/\/api\.example\.com\/mcp\/ \(headers Authorization\) #[0-9a-f]{12}$/,
    );
    expect(toMcpServerSubject(github)).not.toContain('TOKEN');
    const secret = { name: 'files', definition: { ...files.definition, env: { API_KEY: 'sk-literal-secret' } } };
    expect(toMcpServerSubject(secret)).not.toContain('sk-literal-secret');
  });

  it('changes its digest when any part of the definition changes: an arg, an env value, a header, an added field', () => {
    const base = toMcpServerSubject(files);
    const changed = [
      { ...files.definition, args: ['-y', '@modelcontextprotocol/server-filesystem', '/'] },
      { ...files.definition, env: { API_KEY: '${OTHER_KEY}' } },
      { ...files.definition, cwd: '/tmp' },
    ].map((definition) => toMcpServerSubject({ name: 'files', definition }));
    for (const subject of changed) expect(subject).not.toBe(base);
    expect(toMcpServerSubject({ name: 'github', definition: { ...github.definition, headers: {} } })).not.toBe(
      toMcpServerSubject(github),
    );
  });

  it('does not depend on the order of keys', () => {
    const reordered = { env: files.definition.env, args: files.definition.args, command: 'npx', type: 'stdio' };
    expect(toMcpServerSubject({ name: 'files', definition: reordered })).toBe(toMcpServerSubject(files));
  });

  it('quotes words so that a command line can not pass for another one, control characters escaped', () => {
    const tricky = {
      name: 'x',
      definition: { type: 'stdio', command: 'node', args: ["it's", 'a b', '', 'line\nbreak', '\u001b[2Jclear'] },
    };
    expect(toMcpServerSubject(tricky)).toMatch(
      /^x: node 'it'\\''s' 'a b' '' \$'line\\nbreak' \$'\\x1b\[2Jclear' #[0-9a-f]{12}$/,
    );
    const name = { name: 'evil\n? other', definition: { type: 'http', url: 'https://x.test/' } };
    expect(toMcpServerSubject(name)).not.toContain('\n');
  });

  it('asks under the default rules, and "always" saves a rule that allows exactly this definition', () => {
    const defaults = rulesOf(readDefaultPermissionsText());
    const asked = decide(files, defaults);
    expect(asked.decision.type).toBe('ask');
    expect(asked.verdicts.map((verdict) => [verdict.subject.kind, verdict.subject.label])).toEqual([
      ['name', toMcpServerSubject(files)],
    ]);
    expect(asked.alwaysPatterns).toHaveLength(1);

    const saved = addAllowRules(readDefaultPermissionsText(), {
      tool: MCP_SERVER_TOOL,
      patterns: asked.alwaysPatterns ?? [],
    });
    if (!saved.ok) throw new Error(saved.message);
    const rules = rulesOf(saved.text);
    expect(decide(files, rules).decision.type).toBe('allow');
    const changed = { name: 'files', definition: { ...files.definition, env: { API_KEY: '${OTHER}' } } };
    expect(decide(changed, rules).decision.type).toBe('ask');
    expect(decide(github, rules).decision.type).toBe('ask');
  });

  it('lets a person allow or deny servers by name with their own patterns', () => {
    const rules = rulesOf('{ "*": "ask", "mcp.server": { "files: *": "allow", "github: *": "deny" } }');
    expect(decide(files, rules).decision.type).toBe('allow');
    expect(decide(github, rules).decision.type).toBe('deny');
  });

  it('asks, offering no "always", for arguments that describe no server', () => {
    const evaluation = engine.evaluate({
      now: TEST_NOW,
      tool: MCP_SERVER_TOOL,
      args: { name: 3 },
      layers: { file: [] },
    });
    expect(evaluation.decision.type).toBe('ask');
    expect(evaluation.alwaysPatterns).toBeNull();
  });
});
