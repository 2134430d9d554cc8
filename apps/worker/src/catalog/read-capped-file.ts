import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

export type CappedFile = {
  /** The first `maxBytes` bytes (or all of them) as UTF-8, a character cut at the cap dropped. */
  text: string;
  /** The file's real size in bytes. */
  size: number;
  /** The file is larger than `maxBytes` and `text` misses its end. */
  truncated: boolean;
};

/**
 * Reads at most `maxBytes` of a regular file: a 10 MB SKILL.md never comes into memory whole.
 * The path is opened without following a last symlink (callers pass a canonical path, so a link
 * swapped in since is refused rather than followed) and without blocking on a FIFO. Throws
 * (ENOENT, EACCES, ELOOP, or an Error saying it is not a regular file) for the caller to report.
 */
export async function readCappedFile(path: string, maxBytes: number): Promise<CappedFile> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error('not a regular file');
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes));
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    const truncated = info.size > maxBytes;
    // `stream: true` holds back a character the cap cut in two instead of decoding it as U+FFFD.
    const text = new TextDecoder().decode(buffer.subarray(0, filled), { stream: truncated });
    return { text, size: info.size, truncated };
  } finally {
    await handle.close();
  }
}
