import { describe, expect, it } from 'vitest';
import { createPermissionEngine } from './permission-engine.ts';
import { parseRules, TEST_NOW } from './permission-test-kit.ts';

const layers = { file: parseRules('{ "read_file": { "*": "allow" }, "shell_exec": { "git status": "allow" } }') };
const shellCall = { tool: 'shell_exec', args: { command: 'git status' }, layers, now: TEST_NOW };

describe('a permission engine made with lazyParser', () => {
  it('judges file tools without loading the bash grammar', async () => {
    const engine = await createPermissionEngine({ lazyParser: true });
    await engine.prepare('read_file');
    const evaluation = engine.evaluate({ now: TEST_NOW, tool: 'read_file', args: { path: 'src/index.ts' }, layers });
    expect(evaluation.decision.type).toBe('allow');
    // Still not loaded: preparing a file tool loads nothing.
    expect(() => engine.evaluate(shellCall)).toThrow('the bash grammar is not loaded');
  });

  it('judges a shell line once shell_exec is prepared, and refuses to before', async () => {
    const engine = await createPermissionEngine({ lazyParser: true });
    expect(() => engine.pathArguments({ tool: 'shell_exec', args: { command: 'cat a.txt' } })).toThrow(
      'the bash grammar is not loaded',
    );
    await engine.prepare('shell_exec');
    expect(engine.pathArguments({ tool: 'shell_exec', args: { command: 'cat a.txt' } })).toEqual([
      { path: 'a.txt', pattern: false },
    ]);
    expect(engine.evaluate(shellCall).decision.type).toBe('allow');
  });

  it('without lazyParser judges a shell line straight away', async () => {
    const engine = await createPermissionEngine();
    expect(engine.evaluate(shellCall).decision.type).toBe('allow');
  });
});
