import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from '@molf/server';
import { createWorker } from '@molf/worker';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnMolf, stopSpawnedProcesses, waitUntil } from '../testing/cli-test-kit.ts';

const CLIENT_TOKEN = 'molf_c_cli-permissions-test-token';
const WORKER_TOKEN = 'molf_w_cli-permissions-test-token';
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-cli-permissions-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

function molf(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  return spawnMolf(args, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: { MOLF_LOG_LEVEL: 'warn', MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: tmpdir(), ...options.env },
  });
}

const RULES = `{
  // my rules
  "*": "ask",
  "read_file": { "*": "allow", "*.env": "deny" },
  "shell_exec": { "git status": "allow", "rm *": "deny", "git log *": "allow" }
}
`;

// Each case starts the CLI once: a dozen starts outlast the default 30 s on one busy core.
describe('molf permissions explain', () => {
  it('prints the decision, the deciding rule, every subject with its own decision and the always pattern', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'rules.jsonc'), RULES);
    const result = await molf(
      [
        'permissions',
        'explain',
        '--file',
        'rules.jsonc',
        '--tool',
        'shell_exec',
        '--args',
        '{"command": "git status && git push origin main"}',
      ],
      { cwd: dir },
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(
      [
        'decision: ask',
        'because:  the rule "*": "ask" (permissions.jsonc line 3) asks',
        'subjects:',
        '  allow  command  git status',
        '         rule "shell_exec": { "git status": "allow" } (permissions.jsonc line 5)',
        '  ask    command  git push origin main',
        '         rule "*": "ask" (permissions.jsonc line 3)',
        'always:   would allow "git push *"',
      ].join('\n'),
    );
  });

  it('says why "always" would save only the exact line of a destructive command', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'rules.jsonc'), RULES);
    const result = await molf(
      [
        'permissions',
        'explain',
        '--file',
        'rules.jsonc',
        '--tool',
        'shell_exec',
        '--args',
        '{"command": "git push -f"}',
      ],
      { cwd: dir },
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n').slice(-2)).toEqual([
      'always:   would allow "git push -f"',
      '          git push --force overwrites or deletes the remote\'s history, so "always" and "session" offer only this exact command, never a wider pattern.',
    ]);
  });

  it('answers in JSON, follows a symlink in the workdir to the file it names, and denies a hidden rm', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'rules.jsonc'), RULES);
    await writeFile(join(dir, '.env'), 'KEY=1\n');
    await symlink('.env', join(dir, 'innocent.txt'));
    const read = await molf([
      'permissions',
      'explain',
      '--file',
      join(dir, 'rules.jsonc'),
      '--tool',
      'read_file',
      '--args',
      '{"path": "innocent.txt"}',
      '--workdir',
      dir,
      '--json',
    ]);
    expect(read.exitCode).toBe(0);
    expect(JSON.parse(read.stdout)).toMatchObject({
      decision: 'deny',
      subjects: [{ kind: 'path', label: 'innocent.txt → .env', decision: 'deny' }],
      alwaysPatterns: null,
    });

    const shell = await molf([
      'permissions',
      'explain',
      '--file',
      join(dir, 'rules.jsonc'),
      '--tool',
      'shell_exec',
      '--args',
      '{"command": "git log $(rm -rf ~)"}',
      '--json',
    ]);
    expect(JSON.parse(shell.stdout)).toMatchObject({ decision: 'deny', alwaysPatterns: null });
  });

  it('judges the files a shell line reads where they lead in the workdir: links followed, globs expanded as bash would', async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'rules.jsonc'),
      `{ "read_file": { "*": "allow", "*.env": "deny" }, "shell_exec": { "cat *": "allow" } }`,
    );
    await writeFile(join(dir, '.env'), 'KEY=1\n');
    await writeFile(join(dir, 'notes.txt'), 'hello\n');
    await symlink('.env', join(dir, 'innocent.txt'));
    const explain = (command: string) => explainShellLine(dir, command);
    expect((await explain('cat innocent.txt')).decision).toBe('deny');
    expect((await explain('cat .e*')).decision).toBe('deny');
    expect((await explain('cat < innocent.txt')).decision).toBe('deny');
    // bash's * skips dotfiles: `cat *` reads notes.txt and innocent.txt (a link to .env).
    expect((await explain('cat *.txt')).decision).toBe('deny');
    expect((await explain('cat no*.txt')).decision).toBe('allow');
    expect((await explain('cat notes.txt')).decision).toBe('allow');
  });

  it('judges a directory a shell line reads whole by the files under it that read_file may not read', async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'rules.jsonc'),
      `{ "read_file": { "*": "allow", "*.env": "deny" }, "shell_exec": { "*": "allow" } }`,
    );
    await mkdir(join(dir, 'src', 'deep'), { recursive: true });
    await mkdir(join(dir, 'config'), { recursive: true });
    await writeFile(join(dir, 'src', 'deep', 'a.ts'), 'export {};\n');
    await writeFile(join(dir, 'config', 'prod.env'), 'KEY=1\n');
    const explain = (command: string) => explainShellLine(dir, command);
    for (const command of [
      'grep -r KEY .',
      'grep -rn KEY config',
      'rg KEY',
      'cp -r config /tmp/x',
      'tar -czf o.tgz .',
    ]) {
      expect((await explain(command)).decision, command).toBe('deny');
    }
    for (const command of ['grep -r KEY src', 'rg KEY src', 'cp -r src /tmp/x', 'grep KEY src/deep/a.ts']) {
      expect((await explain(command)).decision, command).toBe('allow');
    }
    // rg leaves hidden files out (config/prod.env is not hidden); a grep after `cd src &&` runs only in src.
    await writeFile(join(dir, 'src', '.env'), 'KEY=1\n');
    for (const command of ['rg KEY src', 'cd src/deep && grep -rn KEY .', 'grep -rn KEY --include=*.ts .']) {
      expect((await explain(command)).decision, command).toBe('allow');
    }
    for (const command of ['rg --hidden KEY src', 'cd src; grep -rn KEY config', 'cd src && cat .env']) {
      expect((await explain(command)).decision, command).toBe('deny');
    }
    // More files than one path check takes: the rest ask, as at the gate, instead of failing.
    const many = Array.from({ length: 300 }, (_, index) => `src/m${index}.ts`).join(' ');
    expect((await explain(`for f in ${many}; do wc -l "$f"; done`)).decision).toBe('ask');
  });

  it('fails with file, line and column for a broken rules file, and with a clear message for bad --args', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'rules.jsonc'), '{\n  "*": "ask",\n  "glob": true\n}\n');
    const broken = await molf(['permissions', 'explain', '--file', 'rules.jsonc', '--tool', 'glob'], { cwd: dir });
    expect(broken.exitCode).toBe(1);
    expect(broken.stderr).toContain(
      'rules.jsonc:3:11: the rules for "glob" must be one action ("allow", "deny", "ask") or an object of pattern → action',
    );

    await writeFile(join(dir, 'rules.jsonc'), RULES);
    const badArgs = await molf(['permissions', 'explain', '--file', 'rules.jsonc', '--tool', 'glob', '--args', '[1]'], {
      cwd: dir,
    });
    expect(badArgs.exitCode).toBe(1);
    expect(badArgs.stderr).toContain('--args must be a JSON object');
  });
});

/** `molf permissions explain` of a shell line against `dir/rules.jsonc`, with `dir` as the workdir. */
async function explainShellLine(dir: string, command: string): Promise<{ decision: string }> {
  const result = await molf([
    'permissions',
    'explain',
    '--file',
    join(dir, 'rules.jsonc'),
    '--tool',
    'shell_exec',
    '--args',
    JSON.stringify({ command }),
    '--workdir',
    dir,
    '--json',
  ]);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { decision: string };
}

describe('molf permissions show and edit', () => {
  async function startStack() {
    const dataDir = await tempDir();
    const workdir = await tempDir();
    const server = await createServer({ port: 0, dataDir, tokens: { client: CLIENT_TOKEN, worker: WORKER_TOKEN } });
    cleanups.push(() => server.close());
    const worker = await createWorker({ serverUrl: server.url, token: WORKER_TOKEN, workdir });
    cleanups.push(() => worker.close());
    await worker.registered;
    const env = { MOLF_SERVER_URL: server.url, MOLF_CLIENT_TOKEN: CLIENT_TOKEN };
    return { server, worker, workdir, env };
  }

  it('shows the seeded default file of the worker running on the current directory', async () => {
    const { workdir, env, server, worker } = await startStack();
    const shown = await molf(['permissions', 'show'], { cwd: workdir, env });
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toContain(`// ${server.permissions.pathOf(worker.workerId)}`);
    expect(shown.stdout).toContain('"shell_exec": "ask"');
  });

  it('saves an edit made in $EDITOR, and refuses an invalid one, keeping the file on the server unchanged', async () => {
    const { workdir, env, server, worker } = await startStack();
    const editor = join(workdir, 'editor.mjs');
    await writeFile(
      editor,
      "import { readFileSync, writeFileSync } from 'node:fs';\n" +
        'const file = process.argv[2];\n' +
        "writeFileSync(file, readFileSync(file, 'utf8').replace(process.env.FIND, process.env.REPLACEMENT));\n",
    );
    const editorCommand = `${process.execPath} ${editor}`;

    const edited = await molf(['permissions', 'edit', '--worker', worker.workerId], {
      cwd: tmpdir(),
      env: {
        ...env,
        EDITOR: editorCommand,
        FIND: '"shell_exec": "ask"',
        REPLACEMENT: '"shell_exec": { "*": "ask", "npm test": "allow" }',
      },
    });
    expect(edited.stderr).toBe('');
    expect(edited.stdout).toMatch(/^saved .*permissions\.jsonc \(\d+ rules\); it applies to the next tool call$/);
    const path = server.permissions.pathOf(worker.workerId);
    expect(await readFile(path, 'utf8')).toContain('"npm test": "allow"');

    const broken = await molf(['permissions', 'edit'], {
      cwd: workdir,
      env: { ...env, EDITOR: editorCommand, FIND: '"npm test": "allow" }', REPLACEMENT: '"npm test": "yes" }, "oops"' },
    });
    expect(broken.exitCode).toBe(1);
    expect(broken.stderr).toMatch(/not saved: line \d+, column \d+: .*; your edit is kept in /);
    expect(await readFile(path, 'utf8')).toContain('"npm test": "allow"');
    const keptFile = /kept in (\S+permissions\.jsonc)/.exec(broken.stderr)?.[1] ?? '';
    cleanups.push(() => rm(join(keptFile, '..'), { recursive: true, force: true }));
    expect(await readFile(keptFile, 'utf8')).toContain('"oops"');
  });
});

describe('molf permissions grants and revoke', () => {
  const HOUR = 60 * 60 * 1000;

  /** A server whose clock the test moves, a worker, and one call approved "always" by a web client. */
  async function startStackWithGrants() {
    let now = Date.UTC(2026, 5, 1, 12);
    const dataDir = await tempDir();
    const workdir = await tempDir();
    const server = await createServer({
      port: 0,
      dataDir,
      tokens: { client: CLIENT_TOKEN, worker: WORKER_TOKEN },
      now: () => now,
    });
    cleanups.push(() => server.close());
    const worker = await createWorker({ serverUrl: server.url, token: WORKER_TOKEN, workdir });
    cleanups.push(() => worker.close());
    await worker.registered;
    const grant = async (command: string, expiresAt?: number) => {
      const call = server.toolCalls.run({
        workerId: worker.workerId,
        sessionId: 'session-1',
        tool: 'shell_exec',
        args: { command },
        timeoutMs: 10_000,
      });
      await waitUntil(() => server.gate.pending().length === 1, { what: `an approval for ${command}` });
      const approval = server.gate.pending()[0];
      await server.gate.approve({
        sessionId: 'session-1',
        approvalId: approval?.approvalId ?? '',
        scope: 'always',
        by: { credentialId: 'fixed-client', connectionId: 'c1', client: 'molf-web/0.1.0' },
        ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
      });
      await call;
    };
    const env = { MOLF_SERVER_URL: server.url, MOLF_CLIENT_TOKEN: CLIENT_TOKEN };
    return {
      server,
      worker,
      workdir,
      env,
      grant,
      advance: (ms: number) => {
        now += ms;
      },
      now: () => now,
    };
  }

  it('lists the grants with their expiry, when, by whom, from which client and for which call, also as JSON', async () => {
    const stack = await startStackWithGrants();
    await stack.grant('echo hello', stack.now() + 24 * HOUR);
    await stack.grant('git --version');
    const [limited, lasting] = (await stack.server.grants.list(stack.worker.workerId)).grants;
    const shown = await molf(['permissions', 'grants'], { cwd: stack.workdir, env: stack.env });
    expect(shown.stderr).toBe('');
    const given = /\d{4}-\d\d-\d\d \d\d:\d\dZ/.source;
    expect(shown.stdout).toMatch(
      new RegExp(
        [
          '^GRANT +TOOL +PATTERN +EXPIRES +GIVEN +BY +CLIENT +FOR',
          `${limited?.grantId} +shell_exec +echo \\* +2026-06-02 12:00Z +${given} +fixed-client +molf-web/0\\.1\\.0 +echo hello`,
          `${lasting?.grantId} +shell_exec +git --version +never +${given} +fixed-client +molf-web/0\\.1\\.0 +git --version$`,
        ].join('\\n'),
      ),
    );
    const json = await molf(['permissions', 'grants', '--json', '--worker', stack.worker.workerId], {
      env: stack.env,
    });
    expect(JSON.parse(json.stdout)).toEqual(await stack.server.grants.list(stack.worker.workerId));
  });

  it('revokes a grant by id (the next call asks again), prunes expired ones, and names an unknown id', async () => {
    const stack = await startStackWithGrants();
    await stack.grant('echo hello', stack.now() + HOUR);
    await stack.grant('git --version');
    const [limited, lasting] = (await stack.server.grants.list(stack.worker.workerId)).grants;
    stack.advance(2 * HOUR);

    const pruned = await molf(['permissions', 'grants', '--prune'], { cwd: stack.workdir, env: stack.env });
    expect(pruned.stdout).toMatch(/^revoked 1 expired grant\nGRANT .*\n\S+ +shell_exec +git --version +never /);
    expect(pruned.stdout).not.toContain(limited?.grantId);

    const revoked = await molf(['permissions', 'revoke', lasting?.grantId ?? ''], {
      cwd: stack.workdir,
      env: stack.env,
    });
    expect(revoked.stdout).toBe(
      `revoked ${lasting?.grantId}: "shell_exec" → "git --version" is no longer allowed by it`,
    );
    const path = stack.server.permissions.pathOf(stack.worker.workerId);
    expect(await readFile(path, 'utf8')).not.toMatch(/"grant": "g_[0-9a-f]{16}"/);
    const audit = (await readFile(join(stack.server.dataDir, 'audit', 'approvals.jsonl'), 'utf8')).trim().split('\n');
    expect(JSON.parse(audit.at(-1) ?? '{}')).toMatchObject({
      decision: 'rules_changed',
      grantId: lasting?.grantId,
      client: 'molf-cli/0.1.0',
    });
    const again = stack.server.toolCalls.run({
      workerId: stack.worker.workerId,
      sessionId: 'session-2',
      tool: 'shell_exec',
      args: { command: 'git --version' },
      timeoutMs: 10_000,
    });
    await waitUntil(() => stack.server.gate.pending().length === 1, { what: 'the revoked call to ask again' });
    stack.server.gate.close();
    await again;

    const unknown = await molf(['permissions', 'revoke', 'g_nope'], { cwd: stack.workdir, env: stack.env });
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain(`molf: worker ${stack.worker.workerId} has no grant g_nope: it was revoked`);
  });
});
