import { describe, expect, it } from 'vitest';
import { diffFileChange, toContentBefore } from './diff-file-change.ts';

const lines = (count: number, label = 'line') =>
  Array.from({ length: count }, (_, index) => `${label} ${index + 1}\n`).join('');

describe('diffFileChange', () => {
  it('shows a changed line as a unified diff with a/ and b/ headers and context', () => {
    const diff = diffFileChange({ path: 'src/a.ts', before: { type: 'text', text: 'a\nb\nc\n' }, after: 'a\nB\nc\n' });
    expect(diff).toEqual({
      diff: '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n',
      truncated: false,
    });
  });

  it('shows a new file as a diff from /dev/null, marking a last line without a newline', () => {
    const diff = diffFileChange({ path: 'new.txt', before: { type: 'absent' }, after: 'one\ntwo' });
    expect(diff.diff).toBe('--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n');
    expect(diff.truncated).toBe(false);
  });

  it('cuts a diff past the line limit and says how long it was', () => {
    const diff = diffFileChange({
      path: 'big.txt',
      before: { type: 'absent' },
      after: lines(50),
      limits: { maxLines: 10 },
    });
    expect(diff.diff.split('\n').slice(0, -1)).toHaveLength(10);
    expect(diff.truncated).toBe(true);
    expect(diff.note).toBe('The diff has 53 lines; the first 10 are shown.');
  });

  it('cuts a line longer than the limit and says so', () => {
    const diff = diffFileChange({
      path: 'min.js',
      before: { type: 'text', text: 'x' },
      after: 'y'.repeat(50),
      limits: { maxLineChars: 20 },
    });
    expect(diff.diff).toContain(`+${'y'.repeat(19)}…\n`);
    expect(diff.truncated).toBe(true);
    expect(diff.note).toBe('Lines longer than 20 characters are cut.');
  });

  it('gives a file over the size limit a note instead of a diff, before or after', () => {
    const before = diffFileChange({
      path: 'huge.log',
      before: { type: 'too_large', bytes: 3 * 1024 * 1024 },
      after: 'x',
    });
    expect(before).toEqual({
      diff: '',
      truncated: true,
      note: 'huge.log is 3.0 MB, over the 1.0 MB a diff covers; no diff is shown.',
    });
    const after = diffFileChange({
      path: 'out.txt',
      before: { type: 'text', text: 'small' },
      after: 'z'.repeat(2048),
      limits: { maxFileBytes: 1024 },
    });
    expect(after.diff).toBe('');
    expect(after.note).toBe('out.txt is 2 KB, over the 1 KB a diff covers; no diff is shown.');
  });

  it('gives a binary file, a hidden file and an unchanged file a note and no diff', () => {
    expect(
      diffFileChange({ path: 'a.png', before: toContentBefore(Buffer.from([0x89, 0, 1, 2])), after: 'x' }),
    ).toEqual({
      diff: '',
      truncated: false,
      note: 'a.png is a binary file; no diff is shown.',
    });
    expect(diffFileChange({ path: '.env', before: { type: 'hidden' }, after: 'KEY=1' }).note).toBe(
      'The read_file rules do not let .env be shown, so no diff is.',
    );
    expect(diffFileChange({ path: 'same.txt', before: { type: 'text', text: 'a\n' }, after: 'a\n' })).toEqual({
      diff: '',
      truncated: false,
      note: 'The content of same.txt does not change.',
    });
  });

  it('shows a change too large to compare line by line as the whole file replaced', () => {
    const diff = diffFileChange({
      path: 'rewritten.txt',
      before: { type: 'text', text: lines(1_500, 'old') },
      after: lines(1_500, 'new'),
      limits: { maxLines: 5 },
    });
    expect(diff.diff).toBe('--- a/rewritten.txt\n+++ b/rewritten.txt\n@@ -1,1500 +1,1500 @@\n-old 1\n-old 2\n');
    expect(diff.note).toBe(
      'The change is too large to compare line by line: it is shown as the whole file replaced. The diff has 3003 lines; the first 5 are shown.',
    );
  });
});
