import { beforeAll, describe, expect, it } from 'vitest';
import type { PermissionEngine } from '../permission-engine.ts';
import {
  createWarmEngine,
  defaultRulesAllowingEdits,
  evaluateLine,
  explainEvaluation,
  show,
  TEST_NOW,
} from '../permission-test-kit.ts';
import { analyzeShellLine } from './analyze-shell-line.ts';
import { findDestructiveCommand } from './destructive-commands.ts';
import { loadShellParser, type ShellParser } from './shell-parser.ts';

let engine: PermissionEngine;
let parser: ShellParser;
/**
 * The default rules with edits allowed: the write_file rules also judge the files a line writes
 * (`mv a b`, `dd of=x`), and here only what the shell commands themselves offer counts.
 */
const defaults = defaultRulesAllowingEdits();

beforeAll(async () => {
  engine = await createWarmEngine();
  parser = await loadShellParser();
});

/** The classes of the destructive commands of a line, in order. */
function classesOf(line: string): string[] {
  const names = analyzeShellLine(parser, line).commands.flatMap(
    (command) => findDestructiveCommand(command)?.name ?? [],
  );
  // find -delete is found twice: find itself, and the rm -rf it stands for.
  return [...new Set(names)];
}

function shell(line: string) {
  return evaluateLine(engine, line, { layers: { file: defaults } });
}

/** Every class of the table, each in the spellings its program takes. */
const DESTRUCTIVE: [string, string][] = [
  ['rm x', 'rm'],
  ['rm -rf build', 'rm'],
  ['rm -fr build', 'rm'],
  ['rm -r -f build', 'rm'],
  ['rm --recursive --force build', 'rm'],
  ['rm -R build', 'rm'],
  ['rmdir empty', 'rmdir'],
  ['unlink x', 'unlink'],
  ['shred -u secret.txt', 'shred'],
  ['truncate -s 0 log.txt', 'truncate'],
  ['dd if=a.img of=b.img bs=1M', 'dd of='],
  ['mkfs.ext4 disk.img', 'mkfs.ext4'],
  ['mkfs -t vfat disk.img', 'mkfs'],
  ['mke2fs disk.img', 'mke2fs'],
  ['mkswap swap.img', 'mkswap'],
  ['wipefs -a disk.img', 'wipefs'],
  ['mv a b', 'mv'],
  ['mv -f a b', 'mv'],
  ['chmod -R 755 dir', 'chmod -R'],
  ['chmod --recursive u+w dir', 'chmod -R'],
  ['chmod -vR 755 dir', 'chmod -R'],
  ['chown -R me dir', 'chown -R'],
  ['chown --recursive me:me dir', 'chown -R'],
  ['chgrp -R staff dir', 'chgrp -R'],
  ['chgrp -hR staff dir', 'chgrp -R'],
  ['find . -name "*.o" -delete', 'find -delete'],
  ['rsync -a --delete src/ dst/', 'rsync --delete'],
  ['rsync -a --delete-after src/ dst/', 'rsync --delete'],
  ['rsync -a --remove-source-files src/ dst/', 'rsync --delete'],
  ['kill -9 1234', 'kill -9'],
  ['kill -KILL 1234', 'kill -9'],
  ['kill -SIGKILL 1234', 'kill -9'],
  ['kill -s KILL 1234', 'kill -9'],
  ['kill -s 9 1234', 'kill -9'],
  ['kill --signal=KILL 1234', 'kill -9'],
  ['pkill node', 'pkill'],
  ['pkill -f "vite dev"', 'pkill'],
  ['killall node', 'killall'],
  ['git push --force', 'git push --force'],
  ['git push -f origin main', 'git push --force'],
  ['git push -uf origin main', 'git push --force'],
  ['git push --force-with-lease origin main', 'git push --force'],
  ['git push --force-with-lease=main:abc123 origin main', 'git push --force'],
  ['git push origin +main', 'git push --force'],
  ['git push origin +HEAD:main', 'git push --force'],
  ['git push origin :old-branch', 'git push --force'],
  ['git push --delete origin old-branch', 'git push --force'],
  ['git push -d origin old-branch', 'git push --force'],
  ['git push --mirror backup', 'git push --force'],
  ['git push --prune origin', 'git push --force'],
  ['git -C sub push --force', 'git push --force'],
  ['git -c user.name=x push -f', 'git push --force'],
  ['git reset --hard', 'git reset --hard'],
  ['git reset --hard HEAD~1', 'git reset --hard'],
  ['git clean -f', 'git clean -f'],
  ['git clean -fd', 'git clean -f'],
  ['git clean -xdf', 'git clean -f'],
  ['git clean --force -d', 'git clean -f'],
  ['git branch -D old', 'git branch -D'],
  ['git branch --delete --force old', 'git branch -D'],
  ['git branch -d -f old', 'git branch -D'],
  ['git checkout -- src/app.ts', 'git checkout'],
  ['git checkout .', 'git checkout'],
  ['git checkout -f main', 'git checkout'],
  ['git restore src/app.ts', 'git restore'],
  ['git restore --staged --worktree src/app.ts', 'git restore'],
  ['git stash drop', 'git stash drop'],
  ['git stash clear', 'git stash drop'],
];

/** Harmless relatives of the table's entries: their wider patterns stay. */
const HARMLESS: [string, string[]][] = [
  ['ls -la', ['ls *']],
  ['git push', ['git push']],
  ['git push origin main', ['git push *']],
  ['git push -u origin feature', ['git push *']],
  ['git push origin HEAD:main', ['git push *']],
  ['chmod 644 x', ['chmod *']],
  ['chmod -rwx x', ['chmod *']],
  ['chown me x', ['chown *']],
  ['kill 1234', ['kill *']],
  ['kill -15 1234', ['kill *']],
  ['git reset --soft HEAD~1', ['git reset *']],
  ['git reset HEAD x', ['git reset *']],
  ['git clean -n', ['git clean *']],
  ['git branch -d merged', ['git branch *']],
  ['git checkout -b feature', ['git checkout *']],
  ['git checkout main', ['git checkout *']],
  ['git restore --staged x', ['git restore *']],
  ['git stash push -m wip', ['git stash push *']],
  ['mv -n a b', ['mv *']],
  ['find . -name x', ['find *']],
  ['rsync -a src/ dst/', ['rsync *']],
  ['dd if=a.img', ['dd *']],
];

describe('the destructive command classes', () => {
  it.each(DESTRUCTIVE)('finds %s destructive (%s)', (line, name) => {
    expect(classesOf(line)).toEqual([name]);
  });

  it.each(HARMLESS.map(([line]) => line))('finds %s harmless', (line) => {
    expect(classesOf(line)).toEqual([]);
  });

  it.each(DESTRUCTIVE)('offers only the exact command for %s, with a note naming %s', (line, name) => {
    const evaluation = shell(line);
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('ask');
    expect((evaluation.alwaysPatterns ?? []).some((pattern) => pattern.endsWith(' *'))).toBe(false);
    expect(evaluation.alwaysNote).toMatch(new RegExp(`^${name.replace(/[-+.]/g, '\\$&')} `));
  });

  it.each(HARMLESS)('keeps the wider pattern and adds no note for %s', (line, patterns) => {
    const evaluation = shell(line);
    expect(evaluation.alwaysPatterns).toEqual(patterns);
    expect(evaluation).not.toHaveProperty('alwaysNote');
  });
});

describe('"always" for destructive commands', () => {
  const cases: [string, string[] | null, string][] = [
    [
      'rm -rf build',
      ['rm -rf build'],
      'rm deletes files for good, so "always" and "session" offer only this exact command, never a wider pattern.',
    ],
    [
      'npm test && rm -rf dist',
      ['npm test', 'rm -rf dist'],
      'rm deletes files for good, so "always" and "session" offer only this exact command, never a wider pattern.',
    ],
    [
      'rm a; git push -f',
      ['rm a', 'git push -f'],
      'rm deletes files for good and git push --force overwrites or deletes the remote\'s history, so "always" and "session" offer only these exact commands, never a wider pattern.',
    ],
    [
      'rm -rf "$DIR"',
      null,
      'rm deletes files for good, and what it acts on is only known when the line runs, so "always" and "session" are not offered: approve it once.',
    ],
    [
      'find . -name "*.log" -delete',
      null,
      'find -delete deletes every file it finds, and what it acts on is only known when the line runs, so "always" and "session" are not offered: approve it once.',
    ],
    [
      'dd if=/dev/zero of=/dev/sda',
      null,
      'dd of= overwrites its output file or device, and this line aims it at a device, so "always" and "session" are not offered: approve it once.',
    ],
  ];

  it.each(cases)('offers %j as %j, and says why', (line, patterns, note) => {
    const evaluation = shell(line);
    expect(evaluation.alwaysPatterns, explainEvaluation(evaluation)).toEqual(patterns);
    expect(evaluation.alwaysNote).toBe(note);
  });

  const wrapped: [string, string[] | null][] = [
    ['sudo rm -rf build', ['sudo rm -rf build', 'rm -rf build']],
    ['bash -c "rm -rf build"', ["bash -c 'rm -rf build'", 'rm -rf build']],
    ['sh -c "git push --force"', ["sh -c 'git push --force'", 'git push --force']],
    ['echo $(rm -rf build)', ['echo *', 'rm -rf build']],
    ['echo `git reset --hard`', ['echo *', 'git reset --hard']],
    ['ls | rm -rf build', ['ls', 'rm -rf build']],
    ['timeout 5 rm -rf build', ['rm -rf build']],
    ['nice -n 5 chmod -R 777 dir', ['chmod -R 777 dir']],
    ['env LANG=C rm -rf build', ['rm -rf build']],
    ['/bin/rm -rf build', ['/bin/rm -rf build']],
    ['(cd sub && git clean -fdx)', ['cd *', 'git clean -fdx']],
    ['ls | xargs rm', null],
    ['ls | xargs -I{} rm -rf {}', null],
    ['find . -type f -exec rm {} \\;', null],
    ['find . -exec chmod -R 777 {} +', null],
  ];

  it.each(wrapped)('sees the destructive command inside %s: offers %j', (line, patterns) => {
    const evaluation = shell(line);
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('ask');
    expect(evaluation.alwaysPatterns, explainEvaluation(evaluation)).toEqual(patterns);
    expect(evaluation.alwaysNote, explainEvaluation(evaluation)).toEqual(expect.any(String));
  });

  it('allows the same destructive line once its exact pattern is saved, and asks again for another', () => {
    const asked = shell('rm -rf build');
    const session = (asked.alwaysPatterns ?? []).map((pattern) => ({
      tool: 'shell_exec',
      pattern,
      action: 'allow' as const,
      source: { layer: 'session' as const },
    }));
    const again = (line: string) =>
      engine.evaluate({
        now: TEST_NOW,
        tool: 'shell_exec',
        args: { command: line },
        layers: { file: defaults, session },
      });
    expect(again('rm -rf build').decision.type).toBe('allow');
    for (const other of ['rm -rf src', 'rm -rf build src', 'rm -rf /', 'rm build']) {
      expect(again(other).decision.type, show(other)).toBe('ask');
    }
  });
});
