import { fileURLToPath } from 'node:url';
import { readBuildCommit } from './build-commit.ts';
import { CLI_VERSION } from './cli-version.ts';

/**
 * The commit the bundle was built from (`abc1234, 2026-11-24`), put in by scripts/build-cli.ts;
 * undeclared when the sources run, which read it from git instead.
 */
declare const __MOLF_BUILD_COMMIT__: string | undefined;

/** The checkout these sources belong to (`import.meta.url` is the source file's in the bundle too). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** What `molf --version` prints: `molf 0.1.0 (abc1234, 2026-11-24)`, or `(unknown)` outside a git checkout. */
export function cliVersionLine(): string {
  const commit = typeof __MOLF_BUILD_COMMIT__ === 'string' ? __MOLF_BUILD_COMMIT__ : readBuildCommit({ root: ROOT });
  return `molf ${CLI_VERSION} (${commit})`;
}
