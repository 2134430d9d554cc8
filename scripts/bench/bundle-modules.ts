/**
 * Which package a line of an unminified Vite build belongs to. Vite marks where each module starts
 * with a comment of its path (`// ../node_modules/.pnpm/solid-js@1.9.19/node_modules/solid-js/dist/solid.js`,
 * `// src/chat/markdown-view.tsx`), so a CPU profile's frames can be summed by package.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

const MODULE_START = /^\/\/ (\S+\.(?:[cm]?js|tsx?))$/;

/** `solid-js`, `@tanstack/virtual-core`, `@molf/client`, or `apps/web` for the page's own files. */
function packageOf(path: string): string {
  const installed = path.lastIndexOf('node_modules/');
  if (installed !== -1) {
    const [scope, name] = path.slice(installed + 'node_modules/'.length).split('/');
    return scope?.startsWith('@') === true ? `${scope}/${name}` : (scope ?? path);
  }
  const workspace = /packages\/([^/]+)\/src\//.exec(path);
  if (workspace !== null) return `@molf/${workspace[1]}`;
  return 'apps/web';
}

/** The package of a script's line (1-based) in the build's assets, by the script's file name. */
export type ModuleMap = (file: string, line: number) => string | undefined;

export async function readBundleModules(webRoot: string): Promise<ModuleMap> {
  const starts = new Map<string, Array<{ line: number; name: string }>>();
  for (const file of await readdir(join(webRoot, 'assets'))) {
    if (!file.endsWith('.js')) continue;
    const lines = (await readFile(join(webRoot, 'assets', file), 'utf8')).split('\n');
    const modules: Array<{ line: number; name: string }> = [];
    lines.forEach((text, index) => {
      const match = MODULE_START.exec(text);
      if (match !== null) modules.push({ line: index + 1, name: packageOf(match[1] as string) });
    });
    starts.set(file, modules);
  }
  return (file, line) => {
    const modules = starts.get(file);
    if (modules === undefined) return undefined;
    let found: string | undefined;
    for (const module of modules) {
      if (module.line > line) break;
      found = module.name;
    }
    return found;
  };
}
