/**
 * Syntax highlighting of code blocks, loaded on first use and a language at a time: highlight.js's
 * core, then each language's grammar as its own small chunk when a block needs it. Loading the 36
 * common grammars at once was one long task (about 50 ms) in the middle of a streaming answer; one
 * grammar is a millisecond or two. Only finished blocks are highlighted: a streaming answer changes
 * too often to be worth it.
 */
import type { HLJSApi, LanguageFn } from 'highlight.js';

type GrammarModule = { default: LanguageFn };

/** highlight.js's "common" set, each grammar a chunk of its own. */
const GRAMMARS: Record<string, () => Promise<GrammarModule>> = {
  bash: () => import('highlight.js/lib/languages/bash'),
  c: () => import('highlight.js/lib/languages/c'),
  cpp: () => import('highlight.js/lib/languages/cpp'),
  csharp: () => import('highlight.js/lib/languages/csharp'),
  css: () => import('highlight.js/lib/languages/css'),
  diff: () => import('highlight.js/lib/languages/diff'),
  go: () => import('highlight.js/lib/languages/go'),
  graphql: () => import('highlight.js/lib/languages/graphql'),
  ini: () => import('highlight.js/lib/languages/ini'),
  java: () => import('highlight.js/lib/languages/java'),
  javascript: () => import('highlight.js/lib/languages/javascript'),
  json: () => import('highlight.js/lib/languages/json'),
  kotlin: () => import('highlight.js/lib/languages/kotlin'),
  less: () => import('highlight.js/lib/languages/less'),
  lua: () => import('highlight.js/lib/languages/lua'),
  makefile: () => import('highlight.js/lib/languages/makefile'),
  markdown: () => import('highlight.js/lib/languages/markdown'),
  objectivec: () => import('highlight.js/lib/languages/objectivec'),
  perl: () => import('highlight.js/lib/languages/perl'),
  php: () => import('highlight.js/lib/languages/php'),
  plaintext: () => import('highlight.js/lib/languages/plaintext'),
  python: () => import('highlight.js/lib/languages/python'),
  r: () => import('highlight.js/lib/languages/r'),
  ruby: () => import('highlight.js/lib/languages/ruby'),
  rust: () => import('highlight.js/lib/languages/rust'),
  scss: () => import('highlight.js/lib/languages/scss'),
  shell: () => import('highlight.js/lib/languages/shell'),
  sql: () => import('highlight.js/lib/languages/sql'),
  swift: () => import('highlight.js/lib/languages/swift'),
  typescript: () => import('highlight.js/lib/languages/typescript'),
  vbnet: () => import('highlight.js/lib/languages/vbnet'),
  wasm: () => import('highlight.js/lib/languages/wasm'),
  xml: () => import('highlight.js/lib/languages/xml'),
  yaml: () => import('highlight.js/lib/languages/yaml'),
};

/** The names fences use for those grammars (a grammar's own aliases are known only once it is loaded). */
const ALIASES: Record<string, string> = {
  sh: 'bash',
  zsh: 'bash',
  console: 'shell',
  h: 'c',
  'c++': 'cpp',
  cc: 'cpp',
  hpp: 'cpp',
  cs: 'csharp',
  patch: 'diff',
  golang: 'go',
  gql: 'graphql',
  toml: 'ini',
  jsx: 'javascript',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  kt: 'kotlin',
  md: 'markdown',
  mk: 'makefile',
  make: 'makefile',
  objc: 'objectivec',
  pl: 'perl',
  text: 'plaintext',
  txt: 'plaintext',
  py: 'python',
  rb: 'ruby',
  rs: 'rust',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  vb: 'vbnet',
  html: 'xml',
  xhtml: 'xml',
  svg: 'xml',
  yml: 'yaml',
};

let core: Promise<HLJSApi> | undefined;
const registered = new Map<string, Promise<void>>();

function loadCore(): Promise<HLJSApi> {
  core ??= import('highlight.js/lib/core').then((module) => module.default);
  return core;
}

/** Registers one grammar (its own chunk, its own task), once. */
function loadGrammar(hljs: HLJSApi, name: string): Promise<void> {
  let loading = registered.get(name);
  if (loading === undefined) {
    loading = (GRAMMARS[name] as () => Promise<GrammarModule>)().then((module) => {
      hljs.registerLanguage(name, module.default);
    });
    registered.set(name, loading);
  }
  return loading;
}

/** The grammar a block's `language-…` class names, if it is one of the common set. */
function grammarOf(block: HTMLElement): string | undefined {
  const fence = [...block.classList].find((name) => name.startsWith('language-'))?.slice('language-'.length);
  if (fence === undefined) return undefined;
  const name = ALIASES[fence.toLowerCase()] ?? fence.toLowerCase();
  return name in GRAMMARS ? name : undefined;
}

/** Highlighting gives the page back after this long, so that input and frames never wait for it. */
const SLICE_MS = 10;

function nextSlice(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Highlights the code blocks under `root` that are not yet highlighted, in slices of a few
 * milliseconds (a long answer has many blocks). A block whose fence names no language is
 * recognised among all the common grammars, which are then loaded one by one.
 */
export async function highlightCodeBlocks(root: HTMLElement): Promise<void> {
  const blocks = [...root.querySelectorAll<HTMLElement>('pre code:not(.hljs)')];
  if (blocks.length === 0) return;
  const hljs = await loadCore();
  let sliceStart = performance.now();
  const giveBack = async () => {
    await nextSlice();
    sliceStart = performance.now();
  };
  for (const block of blocks) {
    if (performance.now() - sliceStart > SLICE_MS) await giveBack();
    // Gone from the page meanwhile (the row scrolled away), or highlighted by another call.
    if (!block.isConnected || block.classList.contains('hljs')) continue;
    // Very long blocks would stall the page: they stay plain.
    if ((block.textContent?.length ?? 0) > 100_000) continue;
    const grammar = grammarOf(block);
    const needed = grammar === undefined ? Object.keys(GRAMMARS) : [grammar];
    for (const name of needed) {
      if (!registered.has(name)) {
        await loadGrammar(hljs, name);
        await giveBack();
      } else {
        await registered.get(name);
      }
    }
    if (!block.isConnected || block.classList.contains('hljs')) continue;
    hljs.highlightElement(block);
  }
}
