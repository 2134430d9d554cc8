import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolCallId } from '@molf/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cutPreview, TRUNCATION_LIMITS, truncateAndStore } from './truncate-output.ts';

let workdir: string;
beforeEach(async () => {
  workdir = await mkdtemp(join(tmpdir(), 'molf-truncate-'));
});
afterEach(async () => {
  await rm(workdir, { recursive: true, force: true });
});

const numbered = (count: number) => Array.from({ length: count }, (_, index) => `line ${index + 1}`).join('\n');

describe('cutPreview', () => {
  it('leaves output within both limits alone', () => {
    expect(cutPreview(numbered(2_000))).toBeUndefined();
    expect(cutPreview(`${numbered(2_000)}\n`)).toBeUndefined();
  });

  it('cuts at 2,000 lines', () => {
    const cut = cutPreview(numbered(2_001));
    expect(cut?.shownLines).toBe(2_000);
    expect(cut?.preview.endsWith('line 2000')).toBe(true);
  });

  it('cuts at 50 KB on a line boundary', () => {
    const line = 'x'.repeat(99);
    const cut = cutPreview(Array(1_000).fill(line).join('\n'));
    expect(cut?.shownLines).toBe(Math.floor(TRUNCATION_LIMITS.maxBytes / 100));
    expect(cut?.preview.split('\n').every((shown) => shown === line)).toBe(true);
  });

  it('cuts a single over-long line by bytes without splitting a character', () => {
    const cut = cutPreview('é'.repeat(40_000));
    expect(cut?.shownLines).toBe(0);
    expect(Buffer.byteLength(cut?.preview ?? '')).toBe(TRUNCATION_LIMITS.maxBytes);
    expect(cut?.preview).not.toContain('\uFFFD');
  });
});

describe('truncateAndStore', () => {
  it('saves the full text and says how to read on with parameters that exist', async () => {
    const text = numbered(5_000);
    const result = await truncateAndStore({ text, toolCallId: 'call_1' as ToolCallId, workdir });
    expect(result?.meta).toEqual({
      truncated: true,
      outputId: 'call_1',
      outputPath: join('.molf', 'tool-output', 'call_1.txt'),
      outputBytes: Buffer.byteLength(text),
    });
    expect(await readFile(join(workdir, '.molf', 'tool-output', 'call_1.txt'), 'utf8')).toBe(text);
    expect(result?.output).toContain('showing lines 1–2000 of 5000 lines');
    expect(result?.output).toContain('"startLine": 2001');
    expect(result?.output).not.toMatch(/offset|limit/);
  });

  it('returns nothing for output that fits', async () => {
    expect(await truncateAndStore({ text: 'short', toolCallId: 'call_2' as ToolCallId, workdir })).toBeUndefined();
  });
});
