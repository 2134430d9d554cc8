import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { type FileDiff, MAX_DIFF_FILE_BYTES, MAX_DIFF_LINE_CHARS, MAX_DIFF_LINES } from '@molf/protocol';
import { FILE_HEADERS_ONLY, formatPatch, type StructuredPatch, structuredPatch } from 'diff';
import { looksBinary } from './read-file.ts';
import { isInside, type PathPolicy } from './resolve-tool-path.ts';

/** What a file held before a change, as far as a diff may show it. */
export type ContentBefore =
  | { type: 'absent' }
  | { type: 'text'; text: string }
  | { type: 'binary' }
  | { type: 'too_large'; bytes: number }
  /** The read_file rules deny or ask about the file: its content is not shown. */
  | { type: 'hidden' }
  /** Reading it failed (a file the worker may write but not read). */
  | { type: 'unreadable'; reason: string };

/** The bounds of one diff; each defaults to the protocol's constant of that name. */
export type DiffLimits = { maxLines?: number; maxLineChars?: number; maxFileBytes?: number };

/**
 * Line edits (insertions plus deletions) jsdiff may look for before it gives up: Myers' algorithm
 * costs about (lines × edits), so two 1 MB versions far apart would block the worker for seconds.
 * Past it the change is shown as every old line removed and every new line added.
 */
const MAX_EDIT_LENGTH = 1_000;

/** `12 KB`, `1.4 MB`. */
function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** The name a diff gives a file: relative to the workdir when inside it, else absolute. */
export function diffPathOf(paths: PathPolicy, canonical: string): string {
  return isInside(canonical, paths.workdir) ? relative(paths.workdir, canonical) || '.' : canonical;
}

/**
 * What an existing file holds, for a diff: its text, or why it cannot be shown (binary, larger
 * than `maxFileBytes`, hidden by the read rules — then it is not read at all).
 */
export async function readContentBefore(options: {
  paths: PathPolicy;
  canonical: string;
  size: number;
  isReadDenied?: ((forms: readonly string[]) => boolean) | undefined;
  maxFileBytes?: number;
}): Promise<ContentBefore> {
  if (isHidden(options)) return { type: 'hidden' };
  if (options.size > (options.maxFileBytes ?? MAX_DIFF_FILE_BYTES)) return { type: 'too_large', bytes: options.size };
  try {
    return toContentBefore(await readFile(options.canonical), options.maxFileBytes);
  } catch (error) {
    return { type: 'unreadable', reason: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  }
}

/** Whether the read_file rules keep a file's content from being shown (its forms: relative and absolute). */
export function isHidden(options: {
  paths: PathPolicy;
  canonical: string;
  isReadDenied?: ((forms: readonly string[]) => boolean) | undefined;
}): boolean {
  const { paths, canonical, isReadDenied } = options;
  if (isReadDenied === undefined) return false;
  const forms = isInside(canonical, paths.workdir) ? [diffPathOf(paths, canonical), canonical] : [canonical];
  return isReadDenied(forms);
}

/** A file's bytes as a diff takes them: text (strict UTF-8), binary, or too large. */
export function toContentBefore(content: Buffer, maxFileBytes = MAX_DIFF_FILE_BYTES): ContentBefore {
  if (content.length > maxFileBytes) return { type: 'too_large', bytes: content.length };
  if (looksBinary(content)) return { type: 'binary' };
  try {
    return { type: 'text', text: new TextDecoder('utf-8', { fatal: true }).decode(content) };
  } catch {
    return { type: 'binary' };
  }
}

/** `text` cut into a hunk's lines as jsdiff does, with the marker of a last line without a newline. */
function hunkLines(text: string, mark: '-' | '+'): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  const ended = lines.at(-1) === '';
  if (ended) lines.pop();
  const marked = lines.map((line) => `${mark}${line}`);
  if (!ended) marked.push('\\ No newline at end of file');
  return marked;
}

/** The change as one hunk replacing every line: the shape of a change too large to diff line by line. */
function wholeReplacement(before: string, after: string): StructuredPatch['hunks'] {
  const removed = hunkLines(before, '-');
  const added = hunkLines(after, '+');
  const count = (lines: string[]) => lines.filter((line) => !line.startsWith('\\')).length;
  return [
    {
      oldStart: count(removed) === 0 ? 0 : 1,
      oldLines: count(removed),
      newStart: count(added) === 0 ? 0 : 1,
      newLines: count(added),
      lines: [...removed, ...added],
    },
  ];
}

/**
 * The change of one file as a unified diff (`--- a/path`, `+++ b/path`; `--- /dev/null` for a new
 * file), bounded: at most `maxLines` lines of at most `maxLineChars` characters each, with a note
 * saying what was cut; a binary, too large or hidden file gets a note and no diff. Pure.
 */
export function diffFileChange(options: {
  /** The file as the diff's headers name it. */
  path: string;
  before: ContentBefore;
  after: string;
  limits?: DiffLimits | undefined;
}): FileDiff {
  const { path, before, after } = options;
  const maxLines = options.limits?.maxLines ?? MAX_DIFF_LINES;
  const maxLineChars = options.limits?.maxLineChars ?? MAX_DIFF_LINE_CHARS;
  const maxFileBytes = options.limits?.maxFileBytes ?? MAX_DIFF_FILE_BYTES;
  switch (before.type) {
    case 'hidden':
      return { diff: '', truncated: false, note: `The read_file rules do not let ${path} be shown, so no diff is.` };
    case 'binary':
      return { diff: '', truncated: false, note: `${path} is a binary file; no diff is shown.` };
    case 'too_large':
      return tooLarge(path, before.bytes, maxFileBytes);
    case 'unreadable':
      return { diff: '', truncated: false, note: `${path} could not be read (${before.reason}); no diff is shown.` };
    case 'absent':
    case 'text':
      break;
  }
  if (before.type === 'text') {
    const beforeBytes = Buffer.byteLength(before.text);
    if (beforeBytes > maxFileBytes) return tooLarge(path, beforeBytes, maxFileBytes);
  }
  const afterBytes = Buffer.byteLength(after);
  if (afterBytes > maxFileBytes) return tooLarge(path, afterBytes, maxFileBytes);
  if (looksBinary(Buffer.from(after.slice(0, 8 * 1024)))) {
    return { diff: '', truncated: false, note: `The new content of ${path} is binary; no diff is shown.` };
  }
  const beforeText = before.type === 'text' ? before.text : '';
  if (before.type === 'text' && beforeText === after) {
    return { diff: '', truncated: false, note: `The content of ${path} does not change.` };
  }
  const oldName = before.type === 'absent' ? '/dev/null' : `a/${path}`;
  const newName = `b/${path}`;
  const patch = structuredPatch(oldName, newName, beforeText, after, undefined, undefined, {
    maxEditLength: MAX_EDIT_LENGTH,
  });
  const hunks = patch?.hunks ?? wholeReplacement(beforeText, after);
  const text = formatPatch(
    { oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined, hunks },
    FILE_HEADERS_ONLY,
  );
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  return bound(lines, { maxLines, maxLineChars, whole: patch === undefined });
}

function tooLarge(path: string, bytes: number, maxFileBytes: number): FileDiff {
  return {
    diff: '',
    truncated: true,
    note: `${path} is ${formatBytes(bytes)}, over the ${formatBytes(maxFileBytes)} a diff covers; no diff is shown.`,
  };
}

/** The diff's lines within the bounds, with a note naming what was cut. */
function bound(lines: string[], options: { maxLines: number; maxLineChars: number; whole: boolean }): FileDiff {
  const kept = lines.slice(0, options.maxLines);
  let cutLine = false;
  const shown = kept.map((line) => {
    if (line.length <= options.maxLineChars) return line;
    cutLine = true;
    return `${line.slice(0, options.maxLineChars)}…`;
  });
  const notes: string[] = [];
  if (options.whole)
    notes.push('The change is too large to compare line by line: it is shown as the whole file replaced.');
  if (lines.length > kept.length) {
    notes.push(`The diff has ${lines.length} lines; the first ${kept.length} are shown.`);
  }
  if (cutLine) notes.push(`Lines longer than ${options.maxLineChars} characters are cut.`);
  const truncated = lines.length > kept.length || cutLine;
  return { diff: `${shown.join('\n')}\n`, truncated, ...(notes.length === 0 ? {} : { note: notes.join(' ') }) };
}
