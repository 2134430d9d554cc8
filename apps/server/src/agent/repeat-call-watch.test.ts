import { describe, expect, it } from 'vitest';
import { createRepeatCallWatch, type RepeatVerdict } from './repeat-call-watch.ts';

function observeAll(calls: ReadonlyArray<[string, unknown]>): RepeatVerdict[] {
  const watch = createRepeatCallWatch();
  return calls.map(([toolName, input]) => watch.observe(toolName, input));
}

const glob = (pattern: string): [string, unknown] => ['glob', { pattern }];

describe('the repeat-call watch', () => {
  it('lets two identical calls in a row pass', () => {
    expect(observeAll([glob('*.ts'), glob('*.ts')])).toEqual(['ok', 'ok']);
  });

  it('warns at the third identical call and stops the fourth', () => {
    expect(observeAll([glob('*.ts'), glob('*.ts'), glob('*.ts'), glob('*.ts')])).toEqual(['ok', 'ok', 'warn', 'stop']);
  });

  it('counts a call with other arguments or another tool as a new run', () => {
    expect(observeAll([glob('*.ts'), glob('*.ts'), glob('*.js'), ['grep', { pattern: '*.js' }], glob('*.js')])).toEqual(
      ['ok', 'ok', 'ok', 'ok', 'ok'],
    );
  });

  it('warns a later run of different identical calls again instead of stopping it', () => {
    expect(observeAll([glob('a'), glob('a'), glob('a'), glob('b'), glob('b'), glob('b'), glob('b')])).toEqual([
      'ok',
      'ok',
      'warn',
      'ok',
      'ok',
      'warn',
      'stop',
    ]);
  });

  it('warns the same call again after another call broke its run', () => {
    expect(observeAll([glob('a'), glob('a'), glob('a'), glob('b'), glob('a'), glob('a'), glob('a')])).toEqual([
      'ok',
      'ok',
      'warn',
      'ok',
      'ok',
      'ok',
      'warn',
    ]);
  });
});
