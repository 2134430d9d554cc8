import { stat } from 'node:fs/promises';
import { relative } from 'node:path';
import { toErrorResult, toolDefinitions } from '@molf/protocol';
import { listFiles, modificationTimes, patternEscape } from './list-files.ts';
import { resolveToolPath } from './resolve-tool-path.ts';
import { defineToolHandler } from './tool-handler.ts';

/** Most files glob lists, newest first, after sorting the whole match set (as in the reference: 100). */
export const GLOB_MAX_RESULTS = 100;

export const globTool = defineToolHandler({
  definition: toolDefinitions.glob,
  async run(args, { paths }) {
    const leaves = patternEscape(args.pattern);
    if (leaves !== undefined) return toErrorResult('workdir_escape', leaves);
    const resolved = await resolveToolPath(paths, args.path ?? '.');
    if (!resolved.ok) return resolved.error;
    const root = resolved.value.canonical;
    const info = await stat(root).catch(() => undefined);
    if (info === undefined) return toErrorResult('not_found', `The directory ${args.path} does not exist.`);
    if (!info.isDirectory()) return toErrorResult('not_regular_file', `${args.path} is not a directory.`);

    const files = await listFiles({ root, workdir: paths.workdir, patterns: [args.pattern] });
    if (files.length === 0) {
      return { output: `No files match ${args.pattern} in ${args.path ?? 'the workdir'}.`, meta: { truncated: false } };
    }
    // Newest first over every match, then the cap: the newest files are never cut for older ones.
    const times = await modificationTimes(files);
    const order = files.map((_, index) => index);
    order.sort(
      (a, b) => (times[b] as number) - (times[a] as number) || (files[a] as string).localeCompare(files[b] as string),
    );
    const shown = order.slice(0, GLOB_MAX_RESULTS).map((index) => relative(paths.workdir, files[index] as string));
    const truncated = files.length > GLOB_MAX_RESULTS;
    const note = truncated
      ? `\n[Showing the ${GLOB_MAX_RESULTS} newest of ${files.length} matches; narrow the pattern or the path to see others.]`
      : '';
    return { output: `${shown.join('\n')}${note}`, meta: { truncated } };
  },
});
