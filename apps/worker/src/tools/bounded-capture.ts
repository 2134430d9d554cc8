import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TOOL_OUTPUT_DIR, TRUNCATION_LIMITS } from './truncate-output.ts';

/** Bytes of the start and of the end of a command's output kept in memory. */
export const CAPTURE_HEAD_BYTES = 40 * 1024;
export const CAPTURE_TAIL_BYTES = 10 * 1024;

/**
 * Captures a stream of output in bounded memory: the first CAPTURE_HEAD_BYTES and the last
 * CAPTURE_TAIL_BYTES, while the whole of it streams to `{workdir}/.molf/tool-output/{id}.txt`.
 * A command printing gigabytes costs the worker 50 KB of memory and a file.
 */
export async function createBoundedCapture(options: { workdir: string; outputId: string }) {
  const relativePath = join(TOOL_OUTPUT_DIR, `${options.outputId}.txt`);
  const absolutePath = join(options.workdir, relativePath);
  await mkdir(join(options.workdir, TOOL_OUTPUT_DIR), { recursive: true });
  const file: WriteStream = createWriteStream(absolutePath);
  let fileError: Error | undefined;
  file.on('error', (error) => {
    fileError = error;
  });
  const head: Buffer[] = [];
  let headBytes = 0;
  const tail: Buffer[] = [];
  let tailBytes = 0;
  let totalBytes = 0;
  let newlines = 0;

  return {
    /** Takes one chunk; resolves when the file can take more (back-pressure). */
    async write(chunk: Buffer): Promise<void> {
      totalBytes += chunk.length;
      for (const byte of chunk) if (byte === 0x0a) newlines += 1;
      let rest = chunk;
      if (headBytes < CAPTURE_HEAD_BYTES) {
        const taken = rest.subarray(0, CAPTURE_HEAD_BYTES - headBytes);
        head.push(taken);
        headBytes += taken.length;
        rest = rest.subarray(taken.length);
      }
      if (rest.length > 0) {
        tail.push(rest);
        tailBytes += rest.length;
        while (tailBytes - (tail[0]?.length ?? 0) >= CAPTURE_TAIL_BYTES) {
          tailBytes -= (tail.shift() as Buffer).length;
        }
      }
      // Once the file failed, only the in-memory head and tail are kept; waiting for a drain
      // that never comes would stall the command.
      if (fileError !== undefined || file.write(chunk)) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          file.off('drain', done);
          file.off('error', done);
          file.off('close', done);
          resolve();
        };
        file.on('drain', done);
        file.on('error', done);
        file.on('close', done);
      });
    },

    /**
     * Ends the capture. When everything fitted in memory the file is removed and `omitted` is 0;
     * otherwise the file stays and head and tail are what the preview may show.
     */
    async finish() {
      if (fileError === undefined && !file.destroyed) await new Promise<void>((resolve) => file.end(() => resolve()));
      const headBuffer = Buffer.concat(head);
      let tailBuffer = Buffer.concat(tail);
      if (tailBuffer.length > CAPTURE_TAIL_BYTES)
        tailBuffer = tailBuffer.subarray(tailBuffer.length - CAPTURE_TAIL_BYTES);
      // Everything fits the reference limits: no file, the whole text.
      const fits =
        totalBytes <= TRUNCATION_LIMITS.maxBytes &&
        totalBytes === headBuffer.length + tailBuffer.length &&
        newlines <= TRUNCATION_LIMITS.maxLines;
      if (fits && fileError === undefined) await rm(absolutePath, { force: true });
      return {
        head: headBuffer,
        tail: tailBuffer,
        totalBytes,
        lines: newlines,
        fits,
        /** The spill file, when the output didn't fit (relative to the workdir). */
        outputPath: fits || fileError !== undefined ? undefined : relativePath,
        fileError,
      };
    },
  };
}
