import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ToolCallId, ToolResultMeta } from '@molf/protocol';

/** Output beyond either limit is cut, as in the reference: 2,000 lines or 50 KB. */
export const TRUNCATION_LIMITS = { maxLines: 2_000, maxBytes: 50 * 1024 } as const;

/** Where full outputs are kept, relative to the workdir. */
export const TOOL_OUTPUT_DIR = join('.molf', 'tool-output');

export type TruncatedOutput = { output: string; meta: ToolResultMeta };

/**
 * The first lines of `text` that fit both limits, cut at a line boundary; a first line that alone
 * is too long is cut by bytes, on a character boundary. Returns undefined when all of it fits.
 */
export function cutPreview(
  text: string,
  limits: { maxLines: number; maxBytes: number } = TRUNCATION_LIMITS,
): { preview: string; shownLines: number; totalLines: number } | undefined {
  const totalBytes = Buffer.byteLength(text);
  const lines = text.split('\n');
  // A trailing newline ends the last line; it doesn't start another.
  const totalLines = text.endsWith('\n') ? lines.length - 1 : lines.length;
  if (totalLines <= limits.maxLines && totalBytes <= limits.maxBytes) return undefined;

  let bytes = 0;
  let shownLines = 0;
  while (shownLines < Math.min(totalLines, limits.maxLines)) {
    const lineBytes = Buffer.byteLength(lines[shownLines] as string) + 1;
    if (bytes + lineBytes > limits.maxBytes) break;
    bytes += lineBytes;
    shownLines += 1;
  }
  if (shownLines === 0) {
    // One line longer than the whole budget: keep its first bytes, whole characters only.
    const head = Buffer.from(lines[0] as string)
      .subarray(0, limits.maxBytes)
      .toString('utf8');
    return { preview: head.replace(/\uFFFD+$/, ''), shownLines: 0, totalLines };
  }
  return { preview: lines.slice(0, shownLines).join('\n'), shownLines, totalLines };
}

/**
 * The safety net every tool result passes through: output over the limits is cut, the full text
 * is saved to `{workdir}/.molf/tool-output/{toolCallId}.txt`, and the preview ends with a note
 * that names the file and the read_file / grep parameters that really exist to read on.
 */
export async function truncateAndStore(options: {
  text: string;
  toolCallId: ToolCallId;
  workdir: string;
}): Promise<TruncatedOutput | undefined> {
  const cut = cutPreview(options.text);
  if (cut === undefined) return undefined;
  const outputPath = join(TOOL_OUTPUT_DIR, `${options.toolCallId}.txt`);
  await mkdir(join(options.workdir, TOOL_OUTPUT_DIR), { recursive: true });
  await writeFile(join(options.workdir, outputPath), options.text);
  const totalBytes = Buffer.byteLength(options.text);
  const shown =
    cut.shownLines === 0 ? `the first ${Buffer.byteLength(cut.preview)} bytes of line 1` : `lines 1–${cut.shownLines}`;
  const next = cut.shownLines === 0 ? 1 : cut.shownLines + 1;
  const note =
    `\n\n[Output truncated: showing ${shown} of ${cut.totalLines} lines (${totalBytes} bytes). ` +
    `The full output is in ${outputPath}. Read on with read_file {"path": "${outputPath}", "startLine": ${next}, ` +
    `"endLine": ${next + TRUNCATION_LIMITS.maxLines - 1}}, or search it with grep {"pattern": "…", "path": "${outputPath}"}.]`;
  return {
    output: `${cut.preview}${note}`,
    meta: { truncated: true, outputId: options.toolCallId, outputPath, outputBytes: totalBytes },
  };
}
