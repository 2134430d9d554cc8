import type { DoctorCheck } from './doctor-check.ts';

/** The oldest Node.js that runs Molf (the root package.json's `engines`). */
const OLDEST = [22, 18] as const;
/** The Node.js Molf is built and tested on, which `pnpm install` puts in node_modules. */
const TESTED_MAJOR = 24;

const FIX =
  'install Node.js 24: `npx -y pnpm@10 install` in the Molf checkout puts it in node_modules, and scripts/molf runs with it';

/** The Node.js running this `molf`: 24 or later is what Molf is tested on; 22.18 is the oldest that runs it. */
export function checkNode(version: string = process.versions.node): DoctorCheck {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major >= TESTED_MAJOR) return { id: 'node', status: 'ok', summary: `Node.js ${version}` };
  if (major > OLDEST[0] || (major === OLDEST[0] && minor >= OLDEST[1])) {
    return {
      id: 'node',
      status: 'warning',
      summary: `Node.js ${version}: runs, but Molf is tested on Node.js ${TESTED_MAJOR}`,
      fix: FIX,
    };
  }
  return {
    id: 'node',
    status: 'error',
    summary: `Node.js ${version} is too old: Molf needs ${OLDEST.join('.')} or later (${TESTED_MAJOR} recommended)`,
    fix: FIX,
  };
}
