import { fstatSync } from 'node:fs';
import { isatty } from 'node:tty';

/** Most bytes of stdin `molf run` takes; more is refused, not cut (a cut diff would mislead a review). */
export const MAX_STDIN_BYTES = 150_000;

/** What was piped to stdin. */
export type PipedInput =
  | { type: 'none' }
  | { type: 'text'; text: string }
  | { type: 'too_large'; limitBytes: number }
  | { type: 'binary' };

/**
 * Whether file descriptor `fd` (default 0, stdin) carries piped input: a pipe (`git diff | molf
 * run`), a file (`< notes.md`) or a socket (a parent process's pipe). A terminal is never read (it
 * would wait for typing), nor a character device such as `/dev/null` (what cron and CI give), nor
 * a closed descriptor.
 */
export function isPipedStdin(fd = 0): boolean {
  if (isatty(fd)) return false;
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isFile() || stat.isSocket();
  } catch {
    return false;
  }
}

/**
 * Reads what was piped to stdin, as UTF-8 text, up to `maxBytes` (default `MAX_STDIN_BYTES`): more
 * is `too_large` (reading stops there), a NUL byte makes it `binary`, and nothing but white space is
 * `none`, as is a stdin that is not piped (see `isPipedStdin`).
 */
export async function readPipedStdin(options: { maxBytes?: number } = {}): Promise<PipedInput> {
  const maxBytes = options.maxBytes ?? MAX_STDIN_BYTES;
  // process.stdin is made at its first use: a stdin not read is never touched.
  if (!isPipedStdin(0)) return { type: 'none' };
  const stdin = process.stdin;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      stdin.destroy();
      return { type: 'too_large', limitBytes: maxBytes };
    }
    chunks.push(chunk);
  }
  const bytes = Buffer.concat(chunks);
  if (bytes.includes(0)) return { type: 'binary' };
  const text = new TextDecoder('utf-8').decode(bytes);
  return text.trim() === '' ? { type: 'none' } : { type: 'text', text };
}
