import { open, readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { type ToolResult, toErrorResult, toolDefinitions } from '@molf/protocol';
import { NO_WAIT_READ_FLAG } from './no-wait-read-flag.ts';
import { readTextWindow, type TextWindow } from './read-text-window.ts';
import { resolveToolPath } from './resolve-tool-path.ts';
import { toStoppedResult } from './stopped-result.ts';
import { defineToolHandler } from './tool-handler.ts';
import { TRUNCATION_LIMITS } from './truncate-output.ts';

/**
 * Largest text file whose lines read_file counts (reading it to the end): 20 MiB. Every text file
 * is read as a stream; one larger than this only up to the window asked for.
 */
export const MAX_TEXT_FILE_BYTES = 20 * 1024 * 1024;
/** Largest image or PDF returned as an attachment: 20 MiB (base64 must fit one result). */
export const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;
/** Bytes sampled for binary detection. */
const SAMPLE_BYTES = 8 * 1024;

const ATTACHMENT_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
};

/**
 * Judged from the first 8 KB: text has no NUL byte, and at most 30 % control bytes other than
 * tab, CR, LF, FF.
 */
export function looksBinary(content: Buffer): boolean {
  const sample = content.subarray(0, SAMPLE_BYTES);
  if (sample.includes(0)) return true;
  let control = 0;
  for (const byte of sample) {
    if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c) control += 1;
  }
  return sample.length > 0 && control / sample.length > 0.3;
}

/** The first bytes of a file, for binary detection. */
async function readSample(path: string): Promise<Buffer> {
  const handle = await open(path, NO_WAIT_READ_FLAG);
  try {
    const sample = Buffer.alloc(SAMPLE_BYTES);
    const { bytesRead } = await handle.read(sample, 0, SAMPLE_BYTES, 0);
    return sample.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

export const readFileTool = defineToolHandler({
  definition: toolDefinitions.read_file,
  async run(args, { paths, reads, sessionId, signal }) {
    if (args.startLine !== undefined && args.endLine !== undefined && args.endLine < args.startLine) {
      return toErrorResult(
        'invalid_arguments',
        `endLine (${args.endLine}) is before startLine (${args.startLine}); send endLine ≥ startLine.`,
      );
    }
    const resolved = await resolveToolPath(paths, args.path);
    if (!resolved.ok) return resolved.error;
    const { canonical } = resolved.value;

    const info = await stat(canonical).catch((error: NodeJS.ErrnoException) => error);
    if (info instanceof Error) {
      if (info.code === 'ENOENT' || info.code === 'ENOTDIR') {
        return toErrorResult('not_found', `No file at ${args.path}. Check the path, or find it with glob.`);
      }
      if (info.code === 'EACCES' || info.code === 'EPERM') {
        return toErrorResult('permission_denied', `Permission denied reading ${args.path}.`);
      }
      throw info;
    }
    if (info.isDirectory()) {
      return toErrorResult(
        'not_regular_file',
        `${args.path} is a directory; list it with glob, e.g. "${args.path}/*".`,
      );
    }
    if (!info.isFile()) return toErrorResult('not_regular_file', `${args.path} is not a regular file.`);

    const mimeType = ATTACHMENT_TYPES[extname(canonical).toLowerCase()];
    if (mimeType !== undefined) {
      if (info.size > MAX_ATTACHMENT_BYTES) {
        return toErrorResult(
          'too_large',
          `${args.path} is ${info.size} bytes; attachments are limited to ${MAX_ATTACHMENT_BYTES}.`,
        );
      }
      const data = await readFile(canonical);
      return {
        output: `${args.path}: ${mimeType}, ${info.size} bytes (attached).`,
        attachments: [{ mimeType, path: canonical, size: info.size, data: data.toString('base64') }],
        meta: { truncated: false },
      };
    }
    let window: TextWindow;
    try {
      if (looksBinary(await readSample(canonical))) {
        return toErrorResult(
          'binary',
          `${args.path} looks like a binary file (${info.size} bytes); read_file shows text only.`,
        );
      }
      // Read as a stream whatever the size, so no file and no line is ever held whole. A file up
      // to MAX_TEXT_FILE_BYTES is read to its end to count its lines; a larger one (a spilled
      // output of gigabytes) only up to the window.
      window = await readTextWindow({
        path: canonical,
        first: args.startLine ?? 1,
        last: args.endLine,
        maxLines: TRUNCATION_LIMITS.maxLines,
        maxBytes: TRUNCATION_LIMITS.maxBytes,
        countLines: info.size <= MAX_TEXT_FILE_BYTES,
        signal,
      });
    } catch (error) {
      if (signal.aborted) return toStoppedResult({ tool: 'read_file', signal });
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM') {
        return toErrorResult('permission_denied', `Permission denied reading ${args.path}.`);
      }
      throw error;
    }
    if (window.totalLines === undefined) return showLargeWindow({ window, shownPath: args.path, size: info.size });

    // The session has now seen this version: an edit can be checked against it.
    reads.remember(sessionId, canonical, info);
    return showCountedWindow({ window, shownPath: args.path, totalLines: window.totalLines, endLine: args.endLine });
  },
});

/** A window of a file whose lines were counted: "Content of P (N lines, showing a–b):". */
function showCountedWindow(options: {
  window: TextWindow;
  shownPath: string;
  totalLines: number;
  endLine: number | undefined;
}): ToolResult {
  const { window, shownPath, totalLines } = options;
  if (totalLines > 0 && window.first > totalLines) {
    return toErrorResult(
      'invalid_arguments',
      `startLine ${window.first} is past the end of ${shownPath} (${totalLines} lines).`,
    );
  }
  const last = Math.min(options.endLine ?? totalLines, totalLines);
  const end = window.cut ? window.first + window.lines.length - 1 : last;
  const header = `Content of ${shownPath} (${totalLines} line${totalLines === 1 ? '' : 's'}${
    window.first > 1 || last < totalLines ? `, showing ${window.first}–${end}` : ''
  }):`;
  // Own truncation: the file itself holds the full text, so nothing is spilled.
  const marker = window.cut
    ? `\n[… cut at line ${end} of ${totalLines}. Read on with read_file {"path": "${shownPath}", "startLine": ${end + 1}}.]`
    : '';
  return { output: `${header}\n${window.lines.join('\n')}${marker}`, meta: { truncated: window.cut } };
}

/** A window of a file too large to count its lines: "Content of P (N bytes, …; showing a–b):". */
function showLargeWindow(options: { window: TextWindow; shownPath: string; size: number }): ToolResult {
  const { window, shownPath } = options;
  if (window.lines.length === 0) {
    return toErrorResult(
      'invalid_arguments',
      `startLine ${window.first} is past the end of ${shownPath} (${window.linesSeen} lines).`,
    );
  }
  const end = window.first + window.lines.length - 1;
  const marker = window.cut
    ? `\n[… cut at line ${end}. Read on with read_file {"path": "${shownPath}", "startLine": ${end + 1}}.]`
    : '';
  return {
    output: `Content of ${shownPath} (${options.size} bytes, too large to count its lines; showing ${window.first}–${end}):\n${window.lines.join('\n')}${marker}`,
    meta: { truncated: window.cut },
  };
}
