import { readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Instructions, ReadInstructionsParams } from '@molf/protocol';
import { type PathPolicy, resolveToolPath } from './resolve-tool-path.ts';

/** Instruction file names, by preference, in each directory. */
const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md'];
/** Larger instruction files are cut, so that one file cannot fill the model's context. */
export const MAX_INSTRUCTIONS_BYTES = 64 * 1024;

async function readInstructions(
  directory: string,
  workdir: string,
  names: readonly string[] = INSTRUCTION_FILES,
): Promise<Instructions['files'][number] | undefined> {
  for (const name of names) {
    const path = join(directory, name);
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const truncated = Buffer.byteLength(text) > MAX_INSTRUCTIONS_BYTES;
    return {
      path: relative(workdir, path),
      text: truncated ? Buffer.from(text).subarray(0, MAX_INSTRUCTIONS_BYTES).toString('utf8') : text,
      truncated,
    };
  }
  return undefined;
}

/**
 * Answers the agent loop's `instructions/read` request: the workdir's own AGENTS.md (or CLAUDE.md),
 * or for a file, those of the directories between the workdir and the file (root excluded),
 * outermost first.
 */
export async function readProjectInstructions(
  policy: PathPolicy,
  params: ReadInstructionsParams,
): Promise<Instructions> {
  const { workdir } = policy;
  const files: Instructions['files'] = [];
  if (params.forPath === undefined) {
    const root = await readInstructions(workdir, workdir);
    if (root !== undefined) files.push(root);
  } else {
    const resolved = await resolveToolPath(policy, params.forPath);
    if (resolved.ok && resolved.value.canonical.startsWith(`${workdir}${sep}`)) {
      const directories: string[] = [];
      for (
        let directory = dirname(resolved.value.canonical);
        directory !== workdir && directory.startsWith(workdir);
        directory = dirname(directory)
      ) {
        directories.unshift(directory);
      }
      for (const directory of directories) {
        const found = await readInstructions(directory, workdir);
        if (found !== undefined) files.push(found);
      }
    }
  }
  return { files };
}

/** The heartbeat's checklist: the workdir's HEARTBEAT.md, cut like an instruction file; none when absent. */
export async function readHeartbeatChecklist(policy: PathPolicy): Promise<Instructions> {
  const file = await readInstructions(policy.workdir, policy.workdir, ['HEARTBEAT.md']);
  return { files: file === undefined ? [] : [file] };
}
