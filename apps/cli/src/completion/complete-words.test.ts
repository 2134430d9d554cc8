import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../command-table.ts';
import { completeWords, formatCompletions } from './complete-words.ts';

const values = async (...words: string[]) => (await completeWords(words)).map((completion) => completion.value);

describe('completing the words of a molf command line', () => {
  it("offers molf's own options for a dash before any command", async () => {
    expect(await values('--')).toEqual(['--help', '--version']);
    expect(await values('--v')).toEqual(['--version']);
  });

  it('offers the command names after help', async () => {
    expect(await values('help', '')).toEqual(COMMANDS.map((entry) => entry.name));
    expect(await values('help', 'wor')).toEqual(['worker', 'workers']);
  });

  it("offers an option's choices after it, written apart, joined with =, or split at = as bash does", async () => {
    expect(await values('cron', 'add', '--on-ask', '')).toEqual(['deny', 'wait']);
    expect(await values('cron', 'add', '--missed=s')).toEqual(['--missed=skip']);
    expect(await values('cron', 'add', '--missed', '=', 'r')).toEqual(['run_once']);
  });

  it('takes the word after an option that needs a value as that value, not as a subcommand or operand', async () => {
    expect(await values('cron', 'add', '--model', 'list', '--on-ask', 'w')).toEqual(['wait']);
    expect(await values('completion', '--', '')).toEqual(['bash', 'zsh', 'fish']);
  });

  it('offers nothing for an unknown command or past the last argument with choices', async () => {
    expect(await values('wrokers', '')).toEqual([]);
    expect(await values('completion', 'bash', '')).toEqual([]);
  });

  it('prints one candidate a line, its description after a tab', () => {
    expect(formatCompletions([{ value: 'chat', description: 'talk' }, { value: 'zsh' }])).toBe('chat\ttalk\nzsh\n');
  });
});
