import { constants } from 'node:fs';
import { type FileHandle, open, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReadToolOutputParams, ToolErrorKind, ToolOutputPage } from '@molf/protocol';
import { NO_WAIT_READ_FLAG } from './no-wait-read-flag.ts';
import { TOOL_OUTPUT_DIR } from './truncate-output.ts';

export type ReadToolOutputResult =
  | { ok: true; value: ToolOutputPage }
  | { ok: false; error: { kind: ToolErrorKind; message: string } };

/** A UTF-8 character is at most 4 bytes: a page may end up to 3 bytes back, or start up to 3 on. */
const MAX_CHARACTER_BYTES = 4;

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

/** The length of the UTF-8 character whose first byte is `byte` (1 for a byte that starts none). */
function characterLength(byte: number): number {
  if (byte >= 0xf0 && byte <= 0xf7) return 4;
  if (byte >= 0xe0) return 3;
  if (byte >= 0xc0) return 2;
  return 1;
}

/**
 * Where a page of `buffer` (read from the file, `limit` bytes wanted) may end without splitting a
 * character: at `limit`, moved back to the start of the character it falls in; at least one whole
 * character. Invalid bytes count as characters of their own.
 */
function pageEnd(buffer: Buffer, limit: number, atEnd: boolean): number {
  if (buffer.length <= limit && atEnd) return buffer.length;
  let end = Math.min(limit, buffer.length);
  for (let back = 0; back < MAX_CHARACTER_BYTES - 1 && end > 0 && isContinuation(buffer[end]); back += 1) end -= 1;
  if (isContinuation(buffer[end]) || end === 0) {
    // No boundary near the cut (invalid bytes), or the first character is longer than the limit.
    end = Math.min(buffer.length, end === 0 ? characterLength(buffer[0] ?? 0) : Math.min(limit, buffer.length));
  }
  return end;
}

/**
 * Reads one page of `{workdir}/.molf/tool-output/{outputId}.txt`, the full output a tool saved when
 * its result was cut. Only that file: the folder must really be the workdir's (no link leading
 * elsewhere), and the file a regular one, opened without following a link (O_NOFOLLOW) and checked
 * on the open descriptor, so a link planted in its place cannot make the worker read another file.
 * Pages end on character boundaries; an offset inside a character starts at the next one.
 */
export async function readToolOutput(options: {
  /** The canonical workdir. */
  workdir: string;
  params: ReadToolOutputParams;
}): Promise<ReadToolOutputResult> {
  const { workdir, params } = options;
  const name = `${params.outputId}.txt`;
  const shown = join(TOOL_OUTPUT_DIR, name);
  const fail = (kind: ToolErrorKind, message: string): ReadToolOutputResult => ({
    ok: false,
    error: { kind, message },
  });
  const directory = join(workdir, TOOL_OUTPUT_DIR);
  const real = await realpath(directory).catch((error: NodeJS.ErrnoException) => error);
  if (real instanceof Error) {
    return real.code === 'ENOENT'
      ? fail('not_found', `${shown} does not exist (deleted?)`)
      : fail('internal', `cannot reach ${TOOL_OUTPUT_DIR}: ${real.message}`);
  }
  if (real !== directory) return fail('permission_denied', `refused: ${TOOL_OUTPUT_DIR} leads out of its place`);

  let handle: FileHandle;
  try {
    handle = await open(join(directory, name), NO_WAIT_READ_FLAG | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return fail('not_found', `${shown} does not exist (deleted?)`);
    if (code === 'ELOOP') return fail('not_regular_file', `refused: ${shown} is a symbolic link`);
    return fail('internal', `cannot open ${shown}: ${(error as Error).message}`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return fail('not_regular_file', `refused: ${shown} is not a regular file`);
    const totalBytes = info.size;
    const start = Math.min(params.offset, totalBytes);
    // Up to 3 bytes past the page tell where its last character ends.
    const wanted = Math.min(params.limit + MAX_CHARACTER_BYTES - 1, totalBytes - start);
    const buffer = Buffer.alloc(wanted);
    const { bytesRead } = await handle.read(buffer, 0, wanted, start);
    let bytes = buffer.subarray(0, bytesRead);
    // An offset inside a character (its bytes continue one) starts at the next character.
    let skip = 0;
    while (start > 0 && skip < MAX_CHARACTER_BYTES - 1 && isContinuation(bytes[skip])) skip += 1;
    const offset = start + skip;
    bytes = bytes.subarray(skip);
    const page = bytes.subarray(0, pageEnd(bytes, params.limit, offset + bytes.length >= totalBytes));
    return {
      ok: true,
      value: {
        text: page.toString('utf8'),
        offset,
        bytes: page.length,
        totalBytes,
        done: offset + page.length >= totalBytes,
      },
    };
  } finally {
    await handle.close();
  }
}
