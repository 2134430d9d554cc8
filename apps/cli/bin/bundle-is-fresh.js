// Plain JavaScript, like molf.js: it runs before the bundle is chosen, and a `.ts` file would load
// Node's TypeScript stripper, which is what the bundle is there to avoid.
import { readFileSync, statSync } from 'node:fs';

const ROOT = new URL('../../../', import.meta.url);
const INPUTS = new URL('../dist/build-inputs.json', import.meta.url);

/**
 * True when apps/cli/dist holds a build (scripts/build-cli.ts) and no file it was built from changed
 * after the build began: a stale bundle must never run, so an edit, a checkout or a lockfile change
 * sends `molf` back to the sources until the next `pnpm install` (or `pnpm build`).
 */
export function bundleIsFresh() {
  try {
    const { builtAt, files } = JSON.parse(readFileSync(INPUTS, 'utf8'));
    return files.every((file) => statSync(new URL(file, ROOT)).mtimeMs <= builtAt);
  } catch {
    // No build, or a file it lists is gone: the sources are the truth.
    return false;
  }
}
