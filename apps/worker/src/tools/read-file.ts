import { createReadStream } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { createInterface } from 'node:readline';
import { type ToolResult, toErrorResult, toolDefinitions } from '@molf/protocol';
import { resolveToolPath } from './resolve-tool-path.ts';
import { defineToolHandler } from './tool-handler.ts';
import { TRUNCATION_LIMITS } from './truncate-output.ts';

/** Largest text file read_file loads whole: 20 MiB. Larger ones are read as a stream, one window of lines at a time. */
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

/** A window of lines from a file too large to load whole, read as a stream and stopped early. */
async function readWindow(options: {
  canonical: string;
  shownPath: string;
  size: number;
  first: number;
  last: number | undefined;
}): Promise<ToolResult> {
  const handle = await open(options.canonical, 'r');
  try {
    const sample = Buffer.alloc(SAMPLE_BYTES);
    const { bytesRead } = await handle.read(sample, 0, SAMPLE_BYTES, 0);
    if (looksBinary(sample.subarray(0, bytesRead))) {
      return toErrorResult('binary', `${options.shownPath} looks like a binary file; read_file shows text only.`);
    }
  } finally {
    await handle.close();
  }
  const stream = createReadStream(options.canonical);
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  const shown: string[] = [];
  let bytes = 0;
  let lineNumber = 0;
  let more = false;
  for await (const line of lines) {
    lineNumber += 1;
    if (lineNumber < options.first) continue;
    if (options.last !== undefined && lineNumber > options.last) break;
    const rendered = `${String(lineNumber).padStart(6)}\t${line.length > 2_000 ? `${line.slice(0, 2_000)}… [line cut at 2,000 characters]` : line}`;
    const size = Buffer.byteLength(rendered) + 1;
    if (shown.length >= TRUNCATION_LIMITS.maxLines || bytes + size > TRUNCATION_LIMITS.maxBytes) {
      more = true;
      break;
    }
    shown.push(rendered);
    bytes += size;
  }
  lines.close();
  stream.destroy();
  if (shown.length === 0) {
    return toErrorResult(
      'invalid_arguments',
      `startLine ${options.first} is past the end of ${options.shownPath} (${lineNumber} lines).`,
    );
  }
  const end = options.first + shown.length - 1;
  const marker = more
    ? `\n[… cut at line ${end}. Read on with read_file {"path": "${options.shownPath}", "startLine": ${end + 1}}.]`
    : '';
  return {
    output: `Content of ${options.shownPath} (${options.size} bytes, too large to count its lines; showing ${options.first}–${end}):\n${shown.join('\n')}${marker}`,
    meta: { truncated: more },
  };
}

export const readFileTool = defineToolHandler({
  definition: toolDefinitions.read_file,
  async run(args, { paths, reads, sessionId }) {
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
    if (info.size > MAX_TEXT_FILE_BYTES) {
      // Too large to load: read just the requested window, streaming (e.g. a spilled tool output).
      return readWindow({
        canonical,
        shownPath: args.path,
        size: info.size,
        first: args.startLine ?? 1,
        last: args.endLine,
      });
    }

    const handle = await open(canonical, 'r');
    let content: Buffer;
    try {
      content = await handle.readFile();
    } finally {
      await handle.close();
    }
    if (looksBinary(content)) {
      return toErrorResult(
        'binary',
        `${args.path} looks like a binary file (${info.size} bytes); read_file shows text only.`,
      );
    }

    // The session has now seen this version: an edit can be checked against it.
    reads.remember(sessionId, canonical, info);
    const text = content.toString('utf8');
    const lines = text === '' ? [] : text.split('\n');
    if (text.endsWith('\n')) lines.pop();
    const totalLines = lines.length;
    const first = args.startLine ?? 1;
    if (totalLines > 0 && first > totalLines) {
      return toErrorResult(
        'invalid_arguments',
        `startLine ${first} is past the end of ${args.path} (${totalLines} lines).`,
      );
    }
    const last = Math.min(args.endLine ?? totalLines, totalLines);

    // Own truncation: the file itself holds the full text, so nothing is spilled.
    const shown: string[] = [];
    let bytes = 0;
    let lineNumber = first;
    for (; lineNumber <= last && shown.length < TRUNCATION_LIMITS.maxLines; lineNumber += 1) {
      const line = (lines[lineNumber - 1] as string).replace(/\r$/, '');
      const rendered = `${String(lineNumber).padStart(6)}\t${line}`;
      const size = Buffer.byteLength(rendered) + 1;
      if (bytes + size > TRUNCATION_LIMITS.maxBytes && shown.length > 0) break;
      shown.push(
        size > TRUNCATION_LIMITS.maxBytes ? `${rendered.slice(0, 2_000)}… [line cut at 2,000 characters]` : rendered,
      );
      bytes += size;
    }
    const truncated = lineNumber <= last;
    const header = `Content of ${args.path} (${totalLines} line${totalLines === 1 ? '' : 's'}${
      first > 1 || last < totalLines ? `, showing ${first}–${truncated ? lineNumber - 1 : last}` : ''
    }):`;
    const marker = truncated
      ? `\n[… cut at line ${lineNumber - 1} of ${totalLines}. Read on with read_file {"path": "${args.path}", "startLine": ${lineNumber}}.]`
      : '';
    return { output: `${header}\n${shown.join('\n')}${marker}`, meta: { truncated } };
  },
});
