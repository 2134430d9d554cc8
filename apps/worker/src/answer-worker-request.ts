import { createReadDenial } from '@molf/permissions';
import type { ProjectCatalog, WorkerRequest, WorkerResponse } from '@molf/protocol';
import { readSkill } from './catalog/index.ts';
import { previewFileChange } from './tools/preview-file-change.ts';
import { readHeartbeatChecklist, readProjectInstructions } from './tools/read-instructions.ts';
import { readToolOutput } from './tools/read-tool-output.ts';
import type { ReadTracker } from './tools/read-tracker.ts';
import { type PathPolicy, resolvePathsForGate } from './tools/resolve-tool-path.ts';

/**
 * Answers one of the server's own requests (see `worker-requests.ts` in @molf/protocol). Never
 * throws: a failure is an answer that says what went wrong, and the server treats it as no answer
 * (the gate then asks or refuses; the agent goes on without instructions).
 */
export async function answerWorkerRequest(
  request: WorkerRequest,
  context: {
    paths: PathPolicy;
    /** What each session has read: a preview refuses a file changed since, as the tool does. */
    reads: ReadTracker;
    /** The latest snapshot of the skills and agents; absent when discovery is off. */
    catalog?: () => ProjectCatalog;
  },
): Promise<WorkerResponse> {
  try {
    switch (request.method) {
      case 'paths/resolve':
        return {
          method: request.method,
          result: await resolvePathsForGate(
            context.paths,
            request.params,
            createReadDenial(request.params.readRules ?? []),
          ),
        };
      case 'instructions/read':
        return { method: request.method, result: await readProjectInstructions(context.paths, request.params) };
      case 'heartbeat/read':
        return { method: request.method, result: await readHeartbeatChecklist(context.paths) };
      case 'skills/read':
        if (context.catalog === undefined) {
          return {
            error: { message: 'skills/read failed: this worker runs without skills (catalog discovery is off)' },
          };
        }
        return {
          method: request.method,
          result: await readSkill({
            workdir: context.paths.workdir,
            catalog: context.catalog(),
            name: request.params.name,
            ...(request.params.readRules === undefined
              ? {}
              : { isReadDenied: createReadDenial(request.params.readRules) }),
          }),
        };
      case 'tool-output/read': {
        // Not judged by the read rules: Molf's own record of a call the person already allowed.
        const read = await readToolOutput({ workdir: context.paths.workdir, params: request.params });
        return read.ok
          ? { method: request.method, result: read.value }
          : { error: { message: `tool-output/read: ${read.error.message}`.slice(0, 4_000), kind: read.error.kind } };
      }
      case 'file-change/preview':
        return {
          method: request.method,
          result: await previewFileChange(request.params, { paths: context.paths, reads: context.reads }),
        };
      default:
        request satisfies never;
        return { error: { message: `unknown request ${(request as { method: string }).method}` } };
    }
  } catch (error) {
    return { error: { message: `${request.method} failed: ${(error as Error).message}`.slice(0, 4_000) } };
  }
}
