// The modules of this package import each other without a cycle: a cycle hides an order of
// initialisation and makes a part impossible to test or move alone (the shell analysis had one,
// hidden behind callbacks on its state). Type-only imports count too: they tie the modules as much.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SOURCE = dirname(fileURLToPath(import.meta.url));

/** `import … from './x.ts'`, `export … from '../y.ts'`, `import './z.ts'` and `import('./w.ts')`. */
const RELATIVE_IMPORT =
  /\b(?:import|export)\s[^;]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** Every module under `directory` (tests left out: nothing imports them) with the modules it imports. */
function readImportGraph(directory: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter(
    (file) => file.endsWith('.ts') && !file.endsWith('.test.ts'),
  );
  for (const file of files) {
    const path = join(directory, file);
    const text = readFileSync(path, 'utf8');
    const imported = [...text.matchAll(RELATIVE_IMPORT)].map((match) =>
      relative(directory, resolve(dirname(path), (match[1] ?? match[2]) as string)),
    );
    graph.set(relative(directory, path), imported);
  }
  return graph;
}

/** Each cycle once, as the modules along it, first module again at the end. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (module: string): void => {
    const at = path.indexOf(module);
    if (at !== -1) {
      cycles.push([...path.slice(at), module]);
      return;
    }
    if (done.has(module)) return;
    path.push(module);
    for (const next of graph.get(module) ?? []) visit(next);
    path.pop();
    done.add(module);
  };
  for (const module of [...graph.keys()].sort()) visit(module);
  return cycles;
}

describe('the import graph of @molf/permissions', () => {
  it('reads the imports of every module, across lines and directories', () => {
    const graph = readImportGraph(SOURCE);
    expect(graph.get('permission-engine.ts')).toEqual(
      expect.arrayContaining(['evaluate-permission.ts', 'shell/analyze-shell-line.ts', 'shell/shell-parser.ts']),
    );
    expect(graph.get('shell/analyze-shell-line.ts')).toContain('shell/unwrap-command.ts');
  });

  it('finds a cycle, however long', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
    ]);
    expect(findCycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });

  it('has no cycle', () => {
    const cycles = findCycles(readImportGraph(SOURCE)).map((cycle) => cycle.join(' → '));
    expect(cycles).toEqual([]);
  });
});
