/**
 * Builds the web client (apps/web) into apps/web/dist with Vite, then writes a brotli and a gzip
 * copy of each text file beside it, which the server sends to browsers that take them (no
 * compression work per request). Runs inside `pnpm install` (the root `postinstall`), after the
 * CLI bundle, so that `molf up` serves the page a checkout was installed with.
 *
 * Usage: node scripts/build-web.ts [--if-stale]   (--if-stale: only when a source is newer than the build)
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WEB = join(ROOT, 'apps', 'web');
const DIST = join(WEB, 'dist');
/** Written last: a build that stopped half-way has none, and is built again. */
const STAMP = join(DIST, '.built');
/** What the page is built from: its own files and the workspace packages it bundles. */
const INPUTS = [
  join(WEB, 'src'),
  join(WEB, 'index.html'),
  join(WEB, 'vite.config.ts'),
  join(WEB, 'package.json'),
  join(ROOT, 'packages', 'client', 'src'),
  join(ROOT, 'packages', 'protocol', 'src'),
  join(ROOT, 'pnpm-lock.yaml'),
];
const COMPRESSIBLE = /\.(js|css|html|svg|json|txt|map)$/;

async function newestInput(path: string): Promise<number> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const entry of await readdir(path)) newest = Math.max(newest, await newestInput(join(path, entry)));
  return newest;
}

async function isFresh(): Promise<boolean> {
  const built = await stat(STAMP).catch(() => undefined);
  if (built === undefined) return false;
  let newest = 0;
  for (const input of INPUTS) newest = Math.max(newest, await newestInput(input));
  return newest <= built.mtimeMs;
}

async function filesUnder(directory: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...(await filesUnder(path)));
    else files.push(path);
  }
  return files;
}

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

async function precompress(): Promise<number> {
  let count = 0;
  for (const file of await filesUnder(DIST)) {
    if (!COMPRESSIBLE.test(file)) continue;
    const data = await readFile(file);
    if (data.length < 1024) continue;
    await writeFile(
      `${file}.br`,
      await brotli(data, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
      }),
    );
    await writeFile(`${file}.gz`, await gzipAsync(data, { level: 9 }));
    count += 1;
  }
  return count;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'if-stale': { type: 'boolean', default: false } } });
  if (values['if-stale'] && (await isFresh())) return;
  const { build } = await import('vite');
  await build({ configFile: join(WEB, 'vite.config.ts'), logLevel: 'warn' });
  const compressed = await precompress();
  await writeFile(STAMP, `${new Date().toISOString()}\n`);
  const files = (await filesUnder(DIST)).filter((file) => !file.endsWith('.br') && !file.endsWith('.gz'));
  process.stdout.write(
    `molf: built ${relative(ROOT, DIST)} (${files.length - 1} files, ${compressed} precompressed)\n`,
  );
}

await main();
