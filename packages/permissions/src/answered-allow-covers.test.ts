import { beforeAll, describe, expect, it } from 'vitest';
import type { PermissionLayers } from './evaluate-permission.ts';
import type { PermissionEngine } from './permission-engine.ts';
import type { PermissionRule } from './permission-rule.ts';
import { createWarmEngine, defaultRulesAllowingEdits, evaluateLine, explainEvaluation } from './permission-test-kit.ts';

let engine: PermissionEngine;
/** The default rules with edits allowed: only what the shell rules say about the command counts. */
const defaults = defaultRulesAllowingEdits();

beforeAll(async () => {
  engine = await createWarmEngine();
});

const FILE = { layer: 'file', line: 300, column: 5 } as const;

/** A rule an "always" answer saved in the file: it carries its grant id. */
const granted = (pattern: string): PermissionRule => ({
  tool: 'shell_exec',
  pattern,
  action: 'allow',
  source: FILE,
  grant: 'g_0123456789abcdef',
});
/** A rule a person wrote in the file by hand: no grant id. */
const written = (pattern: string, action: PermissionRule['action'] = 'allow'): PermissionRule => ({
  tool: 'shell_exec',
  pattern,
  action,
  source: FILE,
});
/** A "session" answer. */
const answered = (pattern: string): PermissionRule => ({
  tool: 'shell_exec',
  pattern,
  action: 'allow',
  source: { layer: 'session' },
});

function judge(line: string, layers: { file?: PermissionRule[]; session?: PermissionRule[] }) {
  const all: PermissionLayers = { file: [...defaults, ...(layers.file ?? [])], session: layers.session ?? [] };
  return evaluateLine(engine, line, { layers: all, home: '/home/me' });
}

/**
 * Each class of the destructive table: a destructive line, the wider pattern an answer for a
 * harmless command of the same program saves (or a person edits it to), and that harmless command
 * (undefined when every call of the program is destructive).
 */
const CLASSES: [string, string, string | undefined][] = [
  ['rm -rf build', 'rm *', undefined],
  ['rmdir empty', 'rmdir *', undefined],
  ['unlink x', 'unlink *', undefined],
  ['shred -u secret.txt', 'shred *', undefined],
  ['truncate -s 0 log.txt', 'truncate *', undefined],
  ['dd if=a.img of=b.img bs=1M', 'dd *', 'dd if=a.img'],
  ['mkfs.ext4 disk.img', 'mkfs.ext4 *', undefined],
  ['mkfs -t vfat disk.img', 'mkfs *', undefined],
  ['mke2fs disk.img', 'mke2fs *', undefined],
  ['mkswap swap.img', 'mkswap *', undefined],
  ['wipefs -a disk.img', 'wipefs *', undefined],
  ['mv a b', 'mv *', 'mv -n a b'],
  ['chmod -R 777 .', 'chmod *', 'chmod 644 a.txt'],
  ['chown -R me dir', 'chown *', 'chown me x'],
  ['chgrp -R staff dir', 'chgrp *', 'chgrp staff x'],
  ['rsync -a --delete src/ dst/', 'rsync *', 'rsync -a src/ dst/'],
  ['kill -9 1234', 'kill *', 'kill 1234'],
  ['pkill node', 'pkill *', undefined],
  ['killall node', 'killall *', undefined],
  ['git push --force origin main', 'git push *', 'git push origin main'],
  ['git push origin :old-branch', 'git push *', 'git push origin main'],
  ['git reset --hard origin/main', 'git reset *', 'git reset --soft HEAD~1'],
  ['git clean -fdx', 'git clean *', 'git clean -n'],
  ['git branch -D old', 'git branch *', 'git branch -d merged'],
  ['git checkout -- src/app.ts', 'git checkout *', 'git checkout main'],
  ['git restore src/app.ts', 'git restore *', 'git restore --staged x'],
  ['git stash drop', 'git stash *', 'git stash list'],
];

describe('an answer with a wider pattern never decides a destructive command', () => {
  it.each(CLASSES)('asks for %s although "always" saved %j, and says why', (line, wide) => {
    const evaluation = judge(line, { file: [granted(wide)] });
    expect(evaluation.decision, explainEvaluation(evaluation)).toMatchObject({
      type: 'ask',
      reason: expect.stringMatching(
        new RegExp(`^a saved "${wide.replace(/[*.]/g, '\\$&')}" does not cover a destructive command: \\S`),
      ),
    });
    // What "always" offers for this question is only the exact command.
    expect(evaluation.alwaysPatterns).toEqual([line]);
    expect(evaluation.alwaysNote).toEqual(expect.any(String));
  });

  it.each(CLASSES)('asks for %s although a "session" answer saved %j', (line, wide) => {
    const evaluation = judge(line, { session: [answered(wide)] });
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('ask');
    expect(evaluation.decision).toMatchObject({ reason: expect.stringContaining(`a saved "${wide}"`) });
  });

  it.each(CLASSES)('allows %s when "always" saved exactly that command', (line) => {
    const offered = judge(line, {}).alwaysPatterns ?? [];
    expect(offered).toEqual([line]);
    expect(judge(line, { file: offered.map(granted) }).decision.type).toBe('allow');
    expect(judge(line, { session: offered.map(answered) }).decision.type).toBe('allow');
  });

  it.each(CLASSES)('allows %s under %j when a person wrote that rule (no grant id)', (line, wide) => {
    const evaluation = judge(line, { file: [written(wide)] });
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('allow');
  });

  it.each(
    CLASSES.filter((row): row is [string, string, string] => row[2] !== undefined).map(([, wide, harmless]) => [
      harmless,
      wide,
    ]),
  )('still allows the harmless %s under the answer %j', (harmless, wide) => {
    expect(judge(harmless, { file: [granted(wide)] }).decision.type).toBe('allow');
    expect(judge(harmless, { session: [answered(wide)] }).decision.type).toBe('allow');
  });
});

describe('answers and the other rules around a destructive command', () => {
  it('reveals a deny the wider answer came after: the deny wins', () => {
    const file = [written('git push --force *', 'deny'), granted('git push *')];
    expect(judge('git push --force origin main', { file }).decision.type).toBe('deny');
    expect(judge('git push origin main', { file }).decision.type).toBe('allow');
  });

  it('lets a rule a person wrote decide under a wider answer saved after it', () => {
    const file = [written('git push *'), granted('git *')];
    expect(judge('git push --force origin main', { file }).decision.type).toBe('allow');
  });

  it('keeps a hand-written ask under a wider answer, naming the answer that does not cover it', () => {
    const file = [written('git push --force *', 'ask'), granted('git push *')];
    expect(judge('git push --force origin main', { file }).decision).toEqual({
      type: 'ask',
      rule: file[0],
      reason:
        'a saved "git push *" does not cover a destructive command: git push --force origin main (git push --force overwrites or deletes the remote\'s history)',
    });
  });

  it('does not let the exact answer for one destructive command cover another', () => {
    const file = [granted('rm -rf build')];
    expect(judge('rm -rf build', { file }).decision.type).toBe('allow');
    for (const other of ['rm -rf build src', 'rm -rf src', 'rm build']) {
      expect(judge(other, { file }).decision.type, other).toBe('ask');
    }
  });

  it('takes an exact answer with ~ for the command it names in the home directory', () => {
    expect(judge('rm -rf ~/build', { file: [granted('rm -rf ~/build')] }).decision.type).toBe('allow');
  });

  it('asks for git with global options before push --force under an answered "git *"', () => {
    const evaluation = judge('git -C sub push --force', { session: [answered('git *')] });
    expect(evaluation.decision.type).toBe('ask');
  });
});

describe('answers and destructive commands inside wrappers', () => {
  /**
   * Lines whose wrapper a person allowed by hand, with the wider answer for the command inside, and
   * what the same rules decide when the person wrote that pattern by hand too.
   */
  const WRAPPED: [string, string[], string, 'allow' | 'ask'][] = [
    ['sudo chmod -R 777 dir', ['sudo *'], 'chmod *', 'allow'],
    ['sudo git push --force', ['sudo *'], 'git push *', 'allow'],
    ['bash -c "chmod -R 777 dir"', ['bash *'], 'chmod *', 'allow'],
    ['sh -c "git reset --hard"', ['sh *'], 'git reset *', 'allow'],
    ['ls | xargs rm', ['ls *', 'xargs *'], 'rm *', 'allow'],
    // chmod's operands from xargs ask whatever the rules say (they are file names the rules cannot see).
    ['ls | xargs chmod -R 777', ['ls *', 'xargs *'], 'chmod *', 'ask'],
    ['find . -name "*.o" -delete', ['rm *'], 'find *', 'allow'],
    ['timeout 5 git clean -fdx', [], 'git clean *', 'allow'],
  ];

  it.each(WRAPPED)('asks for %s when the answer %j would cover the command inside', (line, wrappers, wide) => {
    const file = wrappers.map((pattern) => written(pattern));
    for (const layers of [{ file: [...file, granted(wide)] }, { file, session: [answered(wide)] }]) {
      const evaluation = judge(line, layers);
      expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('ask');
    }
  });

  it.each(WRAPPED)(
    'judges %s with %j and %j written by hand as those rules say: %s',
    (line, wrappers, wide, decision) => {
      const evaluation = judge(line, { file: [...wrappers, wide].map((pattern) => written(pattern)) });
      expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe(decision);
    },
  );

  it('allows a destructive command inside sudo whose exact line was answered', () => {
    const file = [written('sudo *'), granted('chmod -R 777 dir')];
    expect(judge('sudo chmod -R 777 dir', { file }).decision.type).toBe('allow');
  });

  it('never lets an answer decide a destructive command whose targets come from xargs, even one naming it exactly', () => {
    const file = [written('ls *'), written('xargs *'), granted('rm')];
    expect(judge('ls | xargs rm', { file }).decision.type).toBe('ask');
  });
});
