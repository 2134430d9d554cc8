import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';

/**
 * The commit a build of Molf comes from, as `molf --version` shows it inside its parentheses:
 * `abc1234, 2026-11-24` (the short hash and the commit's date), `abc1234-dirty, 2026-11-24` when
 * tracked files differ from that commit (as `git describe --dirty` counts them: untracked files
 * do not), `unknown` outside a git checkout or without git.
 */
export function readBuildCommit(options: {
  /** The root of the Molf checkout. */
  root: string;
  /** Where git is looked up (PATH). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
}): string {
  // A GIT_DIR of the calling shell (a git hook, say) must not make git read another repository.
  const { GIT_DIR: _dir, GIT_WORK_TREE: _tree, GIT_INDEX_FILE: _index, ...env } = options.env ?? process.env;
  const git = (args: string[]) =>
    execFileSync('git', args, {
      cwd: options.root,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    }).trim();
  try {
    const [top, hash] = git(['rev-parse', '--show-toplevel', '--short', 'HEAD']).split('\n');
    // A copy of Molf unpacked inside some other repository is not that repository's commit.
    if (top === undefined || hash === undefined || realpathSync(top) !== realpathSync(options.root)) return 'unknown';
    const date = git(['log', '-1', '--format=%cs', 'HEAD']);
    const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
    return `${hash}${dirty ? '-dirty' : ''}, ${date}`;
  } catch {
    // No git, not a checkout, no commit yet: the version is still worth printing.
    return 'unknown';
  }
}
