/**
 * Builds what `molf` runs: apps/cli/src/main.ts and every workspace module it reaches, bundled by
 * rolldown into apps/cli/dist as plain JavaScript, one chunk per lazily imported part. Runs inside
 * `pnpm install` (the root `postinstall`), so a checkout is built by the same command that installs it.
 *
 * Why a build: Node strips TypeScript types with a WebAssembly compiler that it loads on the first
 * `.ts` file, 16 MiB and 40 ms before anything else; `molf --version` is meant to cost 60 MiB in
 * all, 50 MiB of which is Node itself. Why rolldown: it is the bundler already installed for vitest (no new
 * download), reads TypeScript without a separate compiler and splits chunks at dynamic imports.
 *
 * What the bundle keeps as it was:
 * - npm dependencies are not bundled: each import names the installed file, by a path relative to the
 *   chunk, so Node loads exactly the code it would load from the sources (CommonJS, WebAssembly and
 *   data files included). The lockfile is an input: after a dependency change the bundle is stale.
 * - `import.meta.url` in a workspace module is still that module's source file, so files found next
 *   to the sources (the default permissions file, tree-sitter's grammar) are found from the bundle.
 * - Workspace modules do nothing when imported (no top-level effects outside test fixtures), so an
 *   unused export's module is left out: `molf up` imports two helpers of @molf/server and one of
 *   @molf/worker without loading either.
 *
 * Beside it, `dist/up-supervisor.cjs`: the `molf up` supervisor alone, one CommonJS file with its
 * few dependencies inside and nothing required but Node's built-ins (see buildSupervisor).
 *
 * `apps/cli/bin/molf.js` runs the bundle only while it is at least as new as every input recorded in
 * `dist/build-inputs.json`; otherwise it runs the sources.
 *
 * Usage: node scripts/build-cli.ts [--if-stale]   (--if-stale: only when the bundle would not run)
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readBuildCommit } from '@molf/cli/build-commit';
import { bundleIsFresh } from '@molf/cli/bundle-is-fresh';
import type { Plugin, build as rolldownBuild } from 'rolldown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'apps', 'cli');
const DIST = join(CLI, 'dist');
/** What bin/molf.js reads to decide whether the bundle may run. */
const BUILD_INPUTS_FILE = 'build-inputs.json';

/** A file of this workspace's own sources (not a dependency's). */
function isWorkspaceSource(id: string): boolean {
  return id.startsWith(ROOT) && !id.split(sep).includes('node_modules');
}

function isBareSpecifier(source: string): boolean {
  return !source.startsWith('.') && !isAbsolute(source) && !source.startsWith('node:') && !source.startsWith('\0');
}

/** npm dependencies stay outside the bundle, imported by their installed path. */
const keepDependenciesExternal: Plugin = {
  name: 'molf:dependencies-external',
  async resolveId(source, importer, options) {
    if (!isBareSpecifier(source) || source.startsWith('@molf/')) return null;
    const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
    if (resolved === null || resolved.external === true) return resolved;
    return { id: resolved.id, external: 'relative' };
  },
};

/** `import.meta.url` of a workspace module stays its source file's URL (see the header). */
const keepSourceUrls: Plugin = {
  name: 'molf:source-import-meta-url',
  transform(code, id) {
    if (!isWorkspaceSource(id) || !code.includes('import.meta.url')) return null;
    const fromChunk = relative(DIST, id).split(sep).join('/');
    return code.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromChunk)}, import.meta.url).href`);
  },
};

/** Workspace files whose change must make the bundle stale, relative to the root. */
async function buildInputs(bundled: Iterable<string>): Promise<string[]> {
  const packageFiles: string[] = [];
  for (const group of ['apps', 'packages']) {
    for (const name of await readdir(join(ROOT, group))) {
      if (existsSync(join(ROOT, group, name, 'package.json'))) packageFiles.push(join(group, name, 'package.json'));
    }
  }
  const sources = [...bundled].filter(isWorkspaceSource).map((id) => relative(ROOT, id));
  return [...new Set([...sources, ...packageFiles, 'package.json', 'pnpm-lock.yaml', 'scripts/build-cli.ts'])].sort();
}

/** The chunk `molf` starts from; the others are named by their content's hash. */
const ENTRY = 'main.js';
/** The `molf up` supervisor (apps/cli/src/up-supervisor), one CommonJS file; see {@link buildSupervisor}. */
const SUPERVISOR = 'up-supervisor.cjs';
const SUPERVISOR_SOURCE = join(CLI, 'src', 'up-supervisor', 'main.ts');

/**
 * The `molf up` supervisor runs for as long as Molf is up and only starts and stops two processes,
 * so it is built to hold little: one CommonJS file (Node's ES module loader alone costs it 3.5 MiB)
 * with its few dependencies inside, requiring nothing but Node's built-ins. A build whose supervisor
 * would load anything else (a schema library reached through a shared module, say) fails here.
 */
async function buildSupervisor(build: typeof rolldownBuild, staging: string): Promise<string[]> {
  const output = await build({
    input: SUPERVISOR_SOURCE,
    cwd: ROOT,
    platform: 'node',
    resolve: { conditionNames: ['node', 'require', 'default'], mainFields: ['main'] },
    plugins: [keepSourceUrls],
    treeshake: { moduleSideEffects: (id) => !isWorkspaceSource(id) },
    logLevel: 'warn',
    output: { file: join(staging, SUPERVISOR), format: 'cjs' },
  });
  const [chunk, ...others] = output.output;
  if (chunk?.type !== 'chunk' || others.length > 0) throw new Error(`the supervisor must be one file: ${SUPERVISOR}`);
  const foreign = chunk.imports.filter((name) => !isBuiltin(name));
  if (foreign.length > 0) {
    throw new Error(`the molf up supervisor must load only Node's built-ins, but it imports ${foreign.join(', ')}`);
  }
  // Every module rolldown looked at is listed; the ones that left code in the file are what it loads.
  const kept = Object.entries(chunk.modules)
    .filter(([, module]) => module.renderedLength > 0)
    .map(([id]) => id);
  const bundledDependencies = kept.filter((id) => !isWorkspaceSource(id) && !id.startsWith('\0'));
  const heavy = bundledDependencies.filter((id) => /[\\/]node_modules[\\/](zod|execa|@trpc|ai|pino)[\\/]/.test(id));
  if (heavy.length > 0) throw new Error(`the molf up supervisor must not bundle ${heavy.join(', ')}`);
  return chunk.moduleIds;
}

/** The chunks the build in `DIST` made, as its build-inputs.json lists them (none before the first). */
async function previousChunks(): Promise<string[]> {
  try {
    const { chunks } = JSON.parse(await readFile(join(DIST, BUILD_INPUTS_FILE), 'utf8')) as { chunks?: string[] };
    return chunks ?? [];
  } catch {
    return [];
  }
}

/**
 * Moves a build from `staging` into `DIST`: first the hashed chunks (a name already there holds the
 * same content), then the entry, then the list of inputs, each by an atomic rename, so a `molf`
 * starting meanwhile runs the old build or the new one, complete. The previous build's chunks stay
 * until the next build: a process started from it may still import one lazily (the worker imports
 * its MCP connection module when it first starts an MCP server).
 */
async function install(staging: string, chunks: string[]): Promise<void> {
  await mkdir(DIST, { recursive: true });
  const keep = new Set([ENTRY, BUILD_INPUTS_FILE, ...chunks, ...(await previousChunks())]);
  for (const name of [...chunks, ENTRY, BUILD_INPUTS_FILE]) await rename(join(staging, name), join(DIST, name));
  await rm(staging, { recursive: true, force: true });
  for (const name of await readdir(DIST)) {
    if (!keep.has(name)) await rm(join(DIST, name), { force: true });
  }
}

/** rolldown, or undefined when the install left out dev dependencies (`molf` then runs the sources). */
async function loadBundler(): Promise<typeof rolldownBuild | undefined> {
  try {
    return (await import('rolldown')).build;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

async function main(): Promise<void> {
  const { values: flags } = parseArgs({ options: { 'if-stale': { type: 'boolean', default: false } } });
  if (flags['if-stale'] && bundleIsFresh()) return;
  const build = await loadBundler();
  if (build === undefined) {
    process.stdout.write('molf: rolldown is not installed (no dev dependencies); molf runs from the sources\n');
    return;
  }
  // Taken before any input is read: a file saved during the build makes the result stale.
  const builtAt = Date.now();
  const staging = `${DIST}.${process.pid}.tmp`;
  await rm(staging, { recursive: true, force: true });
  const output = await build({
    input: { main: join(CLI, 'src', 'main.ts') },
    cwd: ROOT,
    platform: 'node',
    // Node's own choices for an import (Node 24's conditions; package.json "main", never "module"),
    // so the bundle names the very files of each dependency that the sources load.
    resolve: { conditionNames: ['node', 'import', 'module-sync', 'default'], mainFields: ['main'] },
    plugins: [keepDependenciesExternal, keepSourceUrls],
    // Code that must know it runs bundled (`molf up` hands over to the supervisor bundled beside it),
    // and the commit `molf --version` names (read now: the bundle may run where git is not).
    transform: {
      define: {
        __MOLF_BUNDLE__: 'true',
        __MOLF_BUILD_COMMIT__: JSON.stringify(readBuildCommit({ root: ROOT })),
      },
    },
    treeshake: { moduleSideEffects: (id, external) => external || !isWorkspaceSource(id) },
    logLevel: 'warn',
    output: {
      dir: staging,
      format: 'esm',
      entryFileNames: ENTRY,
      chunkFileNames: '[name]-[hash].js',
    },
  });
  let supervisorModules: string[];
  try {
    supervisorModules = await buildSupervisor(build, staging);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  const bundled = output.output.flatMap((chunk) => (chunk.type === 'chunk' ? chunk.moduleIds : []));
  const files = await buildInputs([...bundled, ...supervisorModules]);
  const chunks = [...output.output.map((chunk) => chunk.fileName).filter((name) => name !== ENTRY), SUPERVISOR];
  await writeFile(join(staging, BUILD_INPUTS_FILE), `${JSON.stringify({ builtAt, files, chunks }, null, 2)}\n`);
  await install(staging, chunks);
  process.stdout.write(
    `molf: built ${relative(ROOT, DIST)} (${chunks.length + 1} chunks from ${files.length} inputs)\n`,
  );
}

await main();
