import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { DoctorCheck } from './doctor-check.ts';
import { findExecutable } from './find-executable.ts';

const FIX =
  'install ripgrep: `sudo apt-get install ripgrep` (Debian, Ubuntu), `sudo dnf install ripgrep`, `brew install ripgrep`';

/** ripgrep on PATH, as the worker's grep tool looks for it; without it the tool works, slower. */
export async function checkRipgrep(env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const rg = await findExecutable('rg', { env, cwd: process.cwd() });
  if (!rg.found) {
    return {
      id: 'ripgrep',
      status: 'warning',
      summary: 'ripgrep (rg) is not on PATH: the grep tool uses its slower JavaScript engine',
      fix: FIX,
    };
  }
  try {
    const { stdout } = await promisify(execFile)(rg.path, ['--version'], { env, timeout: 10_000 });
    return { id: 'ripgrep', status: 'ok', summary: `${stdout.split('\n')[0]?.trim() ?? 'ripgrep'} (${rg.path})` };
  } catch (error) {
    return {
      id: 'ripgrep',
      status: 'warning',
      summary: `${rg.path} does not run (${(error as Error).message.split('\n')[0]}): the grep tool uses its slower JavaScript engine`,
      fix: FIX,
    };
  }
}
