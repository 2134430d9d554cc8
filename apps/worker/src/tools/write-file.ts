import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { toErrorResult, toolDefinitions } from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';
import { resolveFileTarget } from './file-target.ts';
import { refuseWorkerStateWrite } from './refuse-worker-state-write.ts';
import { defineToolHandler } from './tool-handler.ts';

export const writeFileTool = defineToolHandler({
  definition: toolDefinitions.write_file,
  async run(args, { paths, reads, sessionId }) {
    const target = await resolveFileTarget(paths, args.path);
    if (!target.ok) return target.error;
    const { canonical, stats } = target.value;
    const intoWorkerState = await refuseWorkerStateWrite({ paths, canonical, shownPath: args.path });
    if (intoWorkerState !== undefined) return intoWorkerState;
    const existed = stats !== undefined;
    if (existed && args.overwrite === false) {
      return toErrorResult(
        'already_exists',
        `${args.path} exists and overwrite is false; pick another path or edit it.`,
      );
    }

    if (stats !== undefined) {
      const refused = reads.checkBeforeChange(sessionId, canonical, args.path, stats);
      if (refused !== undefined) return refused;
    }

    const parent = dirname(canonical);
    const parentInfo = await stat(parent).catch(() => undefined);
    if (parentInfo === undefined) {
      if (args.createDirectories !== true) {
        return toErrorResult(
          'not_found',
          `The directory of ${args.path} does not exist; send createDirectories: true to create it.`,
        );
      }
      await mkdir(parent, { recursive: true });
    } else if (!parentInfo.isDirectory()) {
      return toErrorResult('not_regular_file', `The parent of ${args.path} is not a directory.`);
    }

    // Atomic (temp file in the same directory, fsync, rename) and keeps an existing file's mode.
    // The canonical path is written, so a link inside the workdir is written through, never replaced.
    await writeFileAtomic(canonical, args.content);
    reads.remember(sessionId, canonical, await stat(canonical));
    const bytes = Buffer.byteLength(args.content);
    return {
      output: `${existed ? 'Overwrote' : 'Created'} ${args.path} (${bytes} bytes written).`,
      meta: { truncated: false },
    };
  },
});
