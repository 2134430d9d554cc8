import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { lstat, readFile, stat } from 'node:fs/promises';
import { delimiter, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { type ToolResult, toErrorResult, toolDefinitions } from '@molf/protocol';
import { listFiles, modificationTimes, patternEscape } from './list-files.ts';
import { NO_WAIT_READ_FLAG } from './no-wait-read-flag.ts';
import { looksBinary } from './read-file.ts';
import { type PathPolicy, resolveToolPath } from './resolve-tool-path.ts';
import { toStoppedResult } from './stopped-result.ts';
import { defineToolHandler, type ToolHandler } from './tool-handler.ts';
import { TRUNCATION_LIMITS } from './truncate-output.ts';

/** Most matches grep returns (as in the reference: 100); the search stops once it has them. */
export const GREP_MAX_MATCHES = 100;
/** Longest line shown; longer ones are cut (as in the reference: 500 characters). */
export const GREP_MAX_LINE_CHARS = 500;
/**
 * Largest file grep searches, with either engine: 20 MiB. Bounds the work of one call whatever
 * the file (a 50 GB sparse file would otherwise be read to the timeout); a file named as the
 * path is refused, a larger one met in a directory is skipped and named in a note.
 */
export const GREP_MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Files skipped for size that the note names; the rest are counted. */
const NAMED_SKIPPED_FILES = 5;

type Match = { file: string; line: number; text: string };
/** `tooLarge`: files of a directory search skipped for size (absolute paths). */
type Search = { matches: Match[]; capped: boolean; tooLarge: string[] } | { error: ToolResult };

/** A stopped search: by the call's timeout or by a cancel, as the signal says. */
function stoppedResult(signal: AbortSignal): ToolResult {
  return toStoppedResult({ tool: 'grep', signal, hint: 'Narrow the path or include.' });
}

/**
 * What `rg --debug` logs for a file its `--max-filesize` skips: "ignoring PATH: N bytes" (the
 * ignore crate's walker, ripgrep 13 and 14). ripgrep has no other way to say which files it skipped.
 */
const RG_SKIPPED_FOR_SIZE = /\bignoring (.+): \d+ bytes$/;
/** A debug line of ripgrep's log (prefixed "rg: " by ripgrep 14), as opposed to an error. */
const RG_DEBUG_LINE = /^(rg: )?(DEBUG|TRACE)\|/;

/** ripgrep on PATH, looked up once. */
let ripgrepPath: string | null | undefined;
export function findRipgrep(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (ripgrepPath === undefined) {
    ripgrepPath = null;
    for (const dir of (env.PATH ?? '').split(delimiter)) {
      if (dir === '') continue;
      try {
        accessSync(join(dir, 'rg'), constants.X_OK);
        ripgrepPath = join(dir, 'rg');
        break;
      } catch {
        // not here
      }
    }
  }
  return ripgrepPath ?? undefined;
}

/** ripgrep, read line by line and stopped once the cap is reached. */
function searchWithRipgrep(options: {
  rg: string;
  pattern: string;
  target: string;
  include: string | undefined;
  /** Files whose matches are dropped as they come, before they count towards the cap. */
  isHidden: (file: string) => boolean;
  signal: AbortSignal;
}): Promise<Search> {
  // -e: a pattern starting with "-" is never a flag. --no-config: the user's rg config can't
  // change the output. --null separates the path, which may contain ':'.
  const args = ['--no-config', '--line-number', '--with-filename', '--no-heading', '--color=never', '--null'];
  // Huge matching lines are cut by rg itself, so one can't fill memory.
  args.push('--max-columns', '4000', '--max-columns-preview');
  // Hidden files yes, .git no; .gitignore honoured in any directory, as the JavaScript engine does.
  args.push('--hidden', '--glob', '!.git', '--no-require-git');
  // Larger files are skipped while walking (rg skips FIFOs, sockets and devices itself);
  // --debug is how it tells which: see RG_SKIPPED_FOR_SIZE.
  args.push('--max-filesize', String(GREP_MAX_FILE_BYTES), '--debug');
  if (options.include !== undefined) args.push('--glob', options.include);
  args.push('-e', options.pattern, '--', options.target);
  // An abort listener never fires for a signal aborted already.
  if (options.signal.aborted) return Promise.resolve({ error: stoppedResult(options.signal) });
  return new Promise((resolve) => {
    const child = spawn(options.rg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const matches: Match[] = [];
    const tooLarge: string[] = [];
    let capped = false;
    let stderr = '';
    const stop = () => child.kill('SIGTERM');
    options.signal.addEventListener('abort', stop, { once: true });
    // Read line by line and never kept whole: with --debug it can be long on a large tree.
    createInterface({ input: child.stderr, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
      if (!RG_DEBUG_LINE.test(line)) {
        if (stderr.length < 4_096) stderr += `${line}\n`;
        return;
      }
      // One debug line per file an include glob lets through: test the cheap part first.
      const skipped = line.endsWith(' bytes') ? RG_SKIPPED_FOR_SIZE.exec(line)?.[1] : undefined;
      if (skipped !== undefined) tooLarge.push(skipped);
    });
    const lines = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (raw) => {
      if (capped) return;
      const nul = raw.indexOf('\0');
      const colon = raw.indexOf(':', nul + 1);
      if (nul === -1 || colon === -1) return;
      if (options.isHidden(raw.slice(0, nul))) return;
      matches.push({ file: raw.slice(0, nul), line: Number(raw.slice(nul + 1, colon)), text: raw.slice(colon + 1) });
      if (matches.length >= GREP_MAX_MATCHES) {
        capped = true;
        lines.close();
        stop();
      }
    });
    child.on('close', (code) => {
      options.signal.removeEventListener('abort', stop);
      // 2 with matches: some file was unreadable or vanished mid-search; the matches still stand.
      if (capped || code === 0 || code === 1 || matches.length > 0) {
        resolve({ matches, capped, tooLarge });
      } else if (options.signal.aborted) {
        resolve({ error: stoppedResult(options.signal) });
      } else {
        resolve({
          error: toErrorResult(
            'invalid_arguments',
            `grep failed: ${stderr.trim() || `ripgrep exited with ${code}`}. Check the pattern (Rust regex syntax).`,
          ),
        });
      }
    });
  });
}

/**
 * The start of a matching line, one character longer than is shown (so the cut is seen), copied
 * into a string of its own: the line, or a slice of it, could keep a whole line of megabytes (or
 * the file's whole text) alive as long as the match, for up to 100 files of 20 MiB.
 */
function detachedStart(line: string): string {
  return Buffer.from(line.slice(0, GREP_MAX_LINE_CHARS + 1)).toString();
}

/** The same search in JavaScript, for machines without ripgrep. */
async function searchWithJavaScript(options: {
  pattern: string;
  target: string;
  isDirectory: boolean;
  include: string | undefined;
  paths: PathPolicy;
  /** Files that are not read at all. */
  isHidden: (file: string) => boolean;
  signal: AbortSignal;
}): Promise<Search> {
  let regex: RegExp;
  try {
    regex = new RegExp(options.pattern, 'u');
  } catch (error) {
    return { error: toErrorResult('invalid_arguments', `Invalid pattern: ${(error as Error).message}.`) };
  }
  const include =
    options.include === undefined ? '**/*' : options.include.includes('/') ? options.include : `**/${options.include}`;
  const files = options.isDirectory
    ? (await listFiles({ root: options.target, workdir: options.paths.workdir, patterns: [include] })).sort()
    : [options.target];
  const matches: Match[] = [];
  const tooLarge: string[] = [];
  for (const file of files) {
    if (options.signal.aborted) return { error: stoppedResult(options.signal) };
    // Links are not followed, as ripgrep doesn't follow them while walking: one could lead outside.
    // FIFOs, sockets and devices are skipped: reading one could block or never end.
    if (options.isHidden(file)) continue;
    const info = await lstat(file).catch(() => undefined);
    if (info === undefined || !info.isFile()) continue;
    if (info.size > GREP_MAX_FILE_BYTES) {
      tooLarge.push(file);
      continue;
    }
    const content = await readFile(file, { flag: NO_WAIT_READ_FLAG }).catch(() => undefined);
    if (content === undefined || looksBinary(content)) continue;
    const lines = content.toString('utf8').split('\n');
    for (const [index, line] of lines.entries()) {
      const text = line.endsWith('\r') ? line.slice(0, -1) : line;
      if (index === lines.length - 1 && text === '') break;
      if (!regex.test(text)) continue;
      matches.push({ file, line: index + 1, text: detachedStart(text) });
      if (matches.length >= GREP_MAX_MATCHES) return { matches, capped: true, tooLarge };
    }
  }
  return { matches, capped: false, tooLarge };
}

/** The note on files a directory search skipped for size: how many, the first few by name. */
function tooLargeNote(files: readonly string[], workdir: string): string {
  if (files.length === 0) return '';
  const names = files
    .map((file) => relative(workdir, file))
    .sort()
    .slice(0, NAMED_SKIPPED_FILES);
  const more = files.length > names.length ? ` and ${files.length - names.length} more` : '';
  return `\n[${files.length} file${files.length === 1 ? '' : 's'} over 20 MiB not searched: ${names.join(', ')}${more}. Read such a file in windows with read_file startLine/endLine, or search it with shell_exec.]`;
}

export type GrepEngine = 'auto' | 'ripgrep' | 'javascript';

/** The grep tool; `engine` picks ripgrep (when on PATH) or the JavaScript fallback. */
export function createGrepTool(engine: GrepEngine = 'auto'): ToolHandler {
  return defineToolHandler({
    definition: toolDefinitions.grep,
    async run(args, { paths, signal, isReadDenied }) {
      const leaves = args.include === undefined ? undefined : patternEscape(args.include);
      if (leaves !== undefined) return toErrorResult('workdir_escape', leaves);
      const resolved = await resolveToolPath(paths, args.path ?? '.');
      if (!resolved.ok) return resolved.error;
      const target = resolved.value.canonical;
      const info = await stat(target).catch(() => undefined);
      if (info === undefined) return toErrorResult('not_found', `No file or directory at ${args.path}.`);
      // Checked before either engine runs: a FIFO would block the search until the timeout, and
      // ripgrep applies --max-filesize only to files it finds while walking, not to a named one.
      if (!info.isFile() && !info.isDirectory()) {
        return toErrorResult(
          'not_regular_file',
          `${args.path} is not a regular file or a directory (a FIFO, socket or device); grep searches files only.`,
        );
      }
      if (info.isFile() && info.size > GREP_MAX_FILE_BYTES) {
        return toErrorResult(
          'too_large',
          `${args.path} is ${info.size} bytes; grep searches files up to 20 MiB. Read it in windows with read_file startLine/endLine, or search it with shell_exec.`,
        );
      }

      // Files read_file would refuse or ask about are left out of the search as it runs: their matches
      // never count towards the cap, and nothing in the answer tells whether they matched (a note
      // "1 file not shown" was a yes/no oracle on a secret's content, one question per call).
      const isHidden = (file: string) => isReadDenied?.([relative(paths.workdir, file), file]) === true;
      const rg = engine === 'javascript' ? undefined : findRipgrep();
      if (engine === 'ripgrep' && rg === undefined) return toErrorResult('internal', 'ripgrep is not on PATH.');
      const search =
        rg === undefined
          ? await searchWithJavaScript({
              pattern: args.pattern,
              target,
              isDirectory: info.isDirectory(),
              include: args.include,
              paths,
              isHidden,
              signal,
            })
          : await searchWithRipgrep({ rg, pattern: args.pattern, target, include: args.include, isHidden, signal });
      if ('error' in search) return search.error;
      const notes = tooLargeNote(search.tooLarge, paths.workdir);
      if (search.matches.length === 0) {
        return { output: `No matches for ${args.pattern}.${notes}`, meta: { truncated: false } };
      }

      // Newest files first, then by path and line, over the matches found.
      const files = [...new Set(search.matches.map((match) => match.file))];
      const times = new Map(files.map((file, index) => [file, index]));
      const mtimes = await modificationTimes(files);
      const mtimeOf = (file: string) => mtimes[times.get(file) as number] as number;
      const sorted = [...search.matches].sort(
        (a, b) => mtimeOf(b.file) - mtimeOf(a.file) || a.file.localeCompare(b.file) || a.line - b.line,
      );
      const lines = sorted.map((match) => {
        const text =
          match.text.length > GREP_MAX_LINE_CHARS ? `${match.text.slice(0, GREP_MAX_LINE_CHARS)}…` : match.text;
        return `${relative(paths.workdir, match.file)}:${match.line}: ${text}`;
      });
      // grep cuts its own output, so it also keeps it within the 50 KB the safety net would allow.
      let bytes = 0;
      let shown = 0;
      while (
        shown < lines.length &&
        bytes + Buffer.byteLength(lines[shown] as string) + 1 <= TRUNCATION_LIMITS.maxBytes
      ) {
        bytes += Buffer.byteLength(lines[shown] as string) + 1;
        shown += 1;
      }
      const capped = search.capped || shown < lines.length;
      const note = search.capped
        ? `\n[Stopped at ${GREP_MAX_MATCHES} matches; narrow the pattern, the path or include to see others.]`
        : shown < lines.length
          ? `\n[Showing ${shown} of ${lines.length} matches (output limit); narrow the pattern, the path or include.]`
          : '';
      return { output: `${lines.slice(0, shown).join('\n')}${note}${notes}`, meta: { truncated: capped } };
    },
  });
}

export const grepTool = createGrepTool();
