import { open } from 'node:fs/promises';
import { NO_WAIT_READ_FLAG } from './no-wait-read-flag.ts';

/** Longest line shown whole; a longer one is cut with a marker that gives its length: 2,000 characters. */
export const MAX_LINE_CHARS = 2_000;
/**
 * Bytes kept of one line: enough to decode MAX_LINE_CHARS + 1 UTF-16 units (3 bytes each at most),
 * so a cut is always seen. The rest of a longer line is counted, never held.
 */
const KEPT_LINE_BYTES = (MAX_LINE_CHARS + 1) * 3;
/** Bytes read at a time. */
const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export type TextWindow = {
  /** The lines shown, rendered: number, tab, text (a long line cut). */
  lines: string[];
  /** Number of the first line shown. */
  first: number;
  /** Whether the limits stopped the window before endLine (or the end of the file). */
  cut: boolean;
  /** Lines in the file, when `countLines` asked to read to its end. */
  totalLines: number | undefined;
  /** Lines seen: every line of the file when it was read to the end. */
  linesSeen: number;
};

/** A line as the window shows it: number, tab, text, cut at MAX_LINE_CHARS with its length in bytes. */
function renderLine(number: number, kept: Buffer, bytes: number): string {
  let text = kept.toString('utf8');
  if (text.length > MAX_LINE_CHARS) {
    // Never half a surrogate pair at the cut.
    const end = /[\uD800-\uDBFF]/.test(text.charAt(MAX_LINE_CHARS - 1)) ? MAX_LINE_CHARS - 1 : MAX_LINE_CHARS;
    text = `${text.slice(0, end)}… [line cut at 2,000 characters; the whole line is ${bytes} bytes]`;
  }
  return `${String(number).padStart(6)}\t${text}`;
}

/**
 * A window of lines of a text file, read as a stream: lines are split at LF (a CR before it
 * dropped), at most the first bytes of each line are kept and the rest only counted, so neither
 * a file of any size nor one line of any length is ever held whole. Stops at `last`, at
 * `maxLines` or `maxBytes` of rendered output, or reads on to the end to count the lines.
 * Rejects with the signal's reason when `signal` aborts.
 */
export async function readTextWindow(options: {
  path: string;
  /** First line to show (1-based). */
  first: number;
  /** Last line to show; default: as many as the limits allow. */
  last?: number | undefined;
  /** Most lines shown. */
  maxLines: number;
  /** Most bytes of rendered lines (each counted with its newline). */
  maxBytes: number;
  /** Read on to the end of the file to count its lines; default false (stop after the window). */
  countLines?: boolean;
  signal?: AbortSignal | undefined;
}): Promise<TextWindow> {
  const lines: string[] = [];
  let renderedBytes = 0;
  let cut = false;
  let collecting = true;
  let lineNumber = 1;
  // The current line: its kept start, its length so far, its last byte (for a CR before the LF).
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let lineBytes = 0;
  let lastByte = -1;

  const wanted = () => collecting && lineNumber >= options.first;
  /** Ends the current line; false once the window is complete. */
  const endLine = (): boolean => {
    if (wanted()) {
      let text = Buffer.concat(kept, keptBytes);
      let bytes = lineBytes;
      if (lastByte === CARRIAGE_RETURN) {
        bytes -= 1;
        if (keptBytes === lineBytes) text = text.subarray(0, text.length - 1);
      }
      const rendered = renderLine(lineNumber, text, bytes);
      const size = Buffer.byteLength(rendered) + 1;
      if (lines.length >= options.maxLines || renderedBytes + size > options.maxBytes) {
        cut = true;
        collecting = false;
      } else {
        lines.push(rendered);
        renderedBytes += size;
      }
    }
    kept.length = 0;
    keptBytes = 0;
    lineBytes = 0;
    lastByte = -1;
    lineNumber += 1;
    if (collecting && options.last !== undefined && lineNumber > options.last) collecting = false;
    return collecting || options.countLines === true;
  };

  const handle = await open(options.path, NO_WAIT_READ_FLAG);
  try {
    // One buffer, read into again and again: what a line keeps is copied out of it.
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    reading: for (;;) {
      options.signal?.throwIfAborted();
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(NEWLINE, start);
        const end = newline === -1 ? chunk.length : newline;
        if (end > start) {
          if (wanted() && keptBytes < KEPT_LINE_BYTES) {
            const part = chunk.subarray(start, Math.min(end, start + KEPT_LINE_BYTES - keptBytes));
            kept.push(Buffer.from(part));
            keptBytes += part.length;
          }
          lineBytes += end - start;
          lastByte = chunk[end - 1] as number;
        }
        if (newline === -1) break;
        if (!endLine()) break reading;
        start = newline + 1;
      }
    }
    // A last line without a final newline.
    if (lineBytes > 0 && (collecting || options.countLines === true)) endLine();
  } finally {
    await handle.close();
  }
  return {
    lines,
    first: options.first,
    cut,
    totalLines: options.countLines === true ? lineNumber - 1 : undefined,
    linesSeen: lineNumber - 1,
  };
}
