import { describe, expect, it } from 'vitest';
import { unifiedDiffLines } from './unified-diff-lines.ts';

describe('unifiedDiffLines', () => {
  it('reads hunks, added, removed and context lines, leaving out the file headers', () => {
    const diff =
      '--- a/a.ts\n+++ b/a.ts\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n@@ -9 +9 @@\n-x\n+y\n\\ No newline at end of file\n';
    expect(unifiedDiffLines(diff)).toEqual([
      { type: 'hunk', text: '@@ -1,3 +1,3 @@' },
      { type: 'same', text: 'one' },
      { type: 'remove', text: 'two' },
      { type: 'add', text: 'TWO' },
      { type: 'same', text: 'three' },
      { type: 'hunk', text: '@@ -9 +9 @@' },
      { type: 'remove', text: 'x' },
      { type: 'add', text: 'y' },
      { type: 'meta', text: 'No newline at end of file' },
    ]);
  });

  it('reads a new file from /dev/null, and nothing from an empty diff', () => {
    expect(unifiedDiffLines('--- /dev/null\n+++ b/n.md\n@@ -0,0 +1,1 @@\n+# New\n')).toEqual([
      { type: 'hunk', text: '@@ -0,0 +1,1 @@' },
      { type: 'add', text: '# New' },
    ]);
    expect(unifiedDiffLines('')).toEqual([]);
  });

  it('keeps a removed line that looks like a header once inside a hunk', () => {
    expect(unifiedDiffLines('--- a/x\n+++ b/x\n@@ -1 +1 @@\n--- old\n+++ new\n')).toEqual([
      { type: 'hunk', text: '@@ -1 +1 @@' },
      { type: 'remove', text: '-- old' },
      { type: 'add', text: '++ new' },
    ]);
  });
});
