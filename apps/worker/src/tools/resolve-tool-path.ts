import { lstat, readdir, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { type ResolvedPaths, type ResolvePathsParams, type ToolResult, toErrorResult } from '@molf/protocol';
import { expandShellPattern } from './expand-shell-pattern.ts';

/** Where tools may reach: the workdir plus configured extra roots, all canonical (symlinks resolved). */
export type PathPolicy = {
  workdir: string;
  extraRoots: readonly string[];
};

export type ResolvedPath = {
  /** The path as the tool will use it: absolute, normalised, symlinks not resolved. */
  absolute: string;
  /** Where it really leads, with every symlink resolved (for a new file: its nearest existing ancestor's). */
  canonical: string;
};

/** Symlink hops followed before giving up on a loop. */
const MAX_LINK_HOPS = 40;

/** Builds a policy from the canonical workdir and extra roots as configured (made canonical here). */
export async function createPathPolicy(options: {
  workdir: string;
  extraRoots?: readonly string[];
}): Promise<PathPolicy> {
  const extraRoots = await Promise.all(
    (options.extraRoots ?? []).map(async (root) => canonicalize(resolve(options.workdir, root))),
  );
  return { workdir: options.workdir, extraRoots };
}

/**
 * Resolves a path a tool was given: relative to the workdir, then canonicalised with every
 * symlink resolved — also a dangling one, and for a path that doesn't exist yet, through its
 * nearest existing ancestor — and checked against the workdir and extra roots. A path whose real
 * location is outside fails with `workdir_escape`, so neither `../..` nor a symlink leads out, and a
 * write never follows a link to a file elsewhere.
 */
export async function resolveToolPath(
  policy: PathPolicy,
  requested: string,
): Promise<{ ok: true; value: ResolvedPath } | { ok: false; error: ToolResult }> {
  if (requested.includes('\0')) {
    return { ok: false, error: toErrorResult('invalid_arguments', 'The path contains a NUL byte; send a plain path.') };
  }
  // The directories on the way are followed as the kernel will (`link/..` is the link target's
  // parent), the last name is kept: a write must see that it is a link.
  const name = basename(requested);
  const absolute =
    name === '' || name === '.' || name === '..'
      ? await resolvePhysically(policy.workdir, requested)
      : join(await resolvePhysically(policy.workdir, dirname(requested)), name);
  const canonical = await canonicalize(absolute);
  const roots = [policy.workdir, ...policy.extraRoots];
  if (roots.some((root) => isInside(canonical, root))) return { ok: true, value: { absolute, canonical } };
  const shown =
    canonical === resolve(policy.workdir, requested)
      ? `"${requested}"`
      : `"${requested}" (which leads to ${canonical})`;
  return {
    ok: false,
    error: toErrorResult(
      'workdir_escape',
      `The path ${shown} is outside the workdir ${policy.workdir}${
        policy.extraRoots.length > 0 ? ` and the allowed roots (${policy.extraRoots.join(', ')})` : ''
      }. Use a path inside the workdir.`,
    ),
  };
}

export function isInside(path: string, root: string): boolean {
  if (path === root) return true;
  const fromRoot = relative(root, path);
  return fromRoot !== '' && !fromRoot.startsWith(`..${sep}`) && fromRoot !== '..' && !isAbsolute(fromRoot);
}

/**
 * `given` resolved against `base` as the kernel does: each `..` applies to where the path led so
 * far, links followed (`path.resolve` drops `link/..` without looking, so `hk/../../x` with hk a
 * link to `.git/hooks` would name the wrong file). Components that do not exist stay as written.
 */
export async function resolvePhysically(base: string, given: string): Promise<string> {
  let current = isAbsolute(given) ? sep : base;
  let followed = 0;
  const pending = given.split('/');
  while (pending.length > 0) {
    const segment = pending.shift() as string;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, segment);
    const link = await lstat(next).catch(() => undefined);
    if (link?.isSymbolicLink() === true && followed < MAX_LINK_HOPS) {
      followed += 1;
      const target = await readlink(next);
      // The target's own components are walked the same way, from the link's directory or the root.
      pending.unshift(...target.split('/'));
      if (isAbsolute(target)) current = sep;
      continue;
    }
    current = next;
  }
  return current;
}

/** The real location of `absolute`, following symlinks even where the target doesn't exist. */
async function canonicalize(absolute: string): Promise<string> {
  let current = absolute;
  for (let hop = 0; hop < MAX_LINK_HOPS; hop += 1) {
    try {
      return await realpath(current);
    } catch (error) {
      // A link loop can't be read or written anyway; the tool reports it when it tries.
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') return absolute;
      if (!isMissing(error)) throw error;
    }
    // Missing, or a dangling link somewhere. A dangling link at the end is followed by hand: a
    // write to it would create its target.
    const link = await lstat(current).catch(() => undefined);
    if (link?.isSymbolicLink() === true) {
      current = resolve(dirname(current), await readlink(current));
      continue;
    }
    // Nothing there: resolve the parent, then put the missing name back.
    const parent = dirname(current);
    if (parent === current) return current;
    return join(await canonicalize(parent), current.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
  }
  // A link loop: report where it started; it can't be read or written anyway.
  return absolute;
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Answers the server's approval gate: where each path really leads, relative to the workdir when
 * it is inside (so `./a/../.env` and a link to `.env` both read `.env`), and absolute. Paths
 * outside every root are answered too: the gate may deny them by rule before the tool refuses.
 */
export async function resolvePathsForGate(
  policy: PathPolicy,
  params: ResolvePathsParams,
  isReadDenied: (forms: readonly string[]) => boolean = () => false,
): Promise<ResolvedPaths> {
  const answer: ResolvedPaths = { paths: [] };
  const { trees, visibleTrees } = params;
  if (trees !== undefined || visibleTrees !== undefined) {
    answer.trees = [];
    // Hidden-skipping walks first: a directory also read whole is answered by the full walk after it.
    const walks = [
      ...(visibleTrees ?? []).map((given) => ({ given, skipHidden: true })),
      ...(trees ?? []).map((given) => ({ given, skipHidden: false })),
    ];
    for (const { given, skipHidden } of walks) {
      const forms = await formsOf(policy, given);
      const found =
        forms.length === 0 ? undefined : await findReadDeniedFile(policy, forms, { isReadDenied, skipHidden });
      // The refused file's forms first: the gate judges a subject's question by its first form.
      answer.trees.push({ given, forms: found === undefined ? [] : [...found, ...forms] });
    }
  }
  for (const given of params.paths) answer.paths.push({ given, forms: await formsOf(policy, given) });
  for (const pattern of params.patterns ?? []) {
    // Every file the pattern names, as bash would expand it; none at all when there are too many.
    const matches = pattern.includes('\0') ? undefined : await expandShellPattern({ pattern, cwd: policy.workdir });
    const forms = new Set<string>();
    for (const match of matches ?? []) for (const form of await formsOf(policy, match)) forms.add(form);
    answer.paths.push({ given: pattern, forms: [...forms] });
  }
  return answer;
}

/** Entries a tree walk for the gate looks at before it gives up (the gate then asks). */
const MAX_TREE_ENTRIES = 20_000;

/**
 * The forms of the first file under a directory that the read rules deny (none: an empty list), or
 * undefined when the directory is too large or unreadable to tell. Links are not followed, as
 * `grep -r`, `rg` and `cp -r` do not follow them; the directory itself may be a file.
 */
async function findReadDeniedFile(
  policy: PathPolicy,
  forms: readonly string[],
  options: { isReadDenied: (forms: readonly string[]) => boolean; skipHidden: boolean },
): Promise<string[] | undefined> {
  const { isReadDenied } = options;
  const root = forms.find((form) => isAbsolute(form));
  if (root === undefined) return undefined;
  const formsAt = (path: string) =>
    isInside(path, policy.workdir) ? [relative(policy.workdir, path) || '.', path] : [path];
  const info = await lstat(root).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) return [];
  const pending = [root];
  let seen = 0;
  while (pending.length > 0) {
    const directory = pending.pop() as string;
    const entries = await readdir(directory, { withFileTypes: true }).catch(() => undefined);
    if (entries === undefined) return undefined;
    for (const entry of entries) {
      seen += 1;
      if (seen > MAX_TREE_ENTRIES) return undefined;
      if (options.skipHidden && entry.name.startsWith('.')) continue;
      const path = join(directory, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (isReadDenied(formsAt(path))) return formsAt(path);
    }
  }
  return [];
}

/** Where one path leads: relative to the workdir when inside, and absolute; none when it can't be told. */
async function formsOf(policy: PathPolicy, given: string): Promise<string[]> {
  if (given.includes('\0')) return [];
  // A path that can't be resolved (permissions, a name too long) gets no forms: the gate then asks.
  const canonical = await resolvePhysically(policy.workdir, given)
    .then(canonicalize)
    .catch(() => undefined);
  if (canonical === undefined) return [];
  return isInside(canonical, policy.workdir) ? [relative(policy.workdir, canonical) || '.', canonical] : [canonical];
}

/**
 * Refuses a call whose path arguments no longer lead where they led when the approval gate judged
 * them; undefined when every path still does.
 */
export async function checkApprovedPaths(
  policy: PathPolicy,
  approvedPaths: Readonly<Record<string, string>>,
): Promise<ToolResult | undefined> {
  for (const [given, approved] of Object.entries(approvedPaths)) {
    const now = await resolvePhysically(policy.workdir, given)
      .then(canonicalize)
      .catch(() => undefined);
    if (now !== approved) {
      const refusal = toErrorResult(
        'permission_denied',
        `"${given}" now leads to ${now ?? 'a path that cannot be resolved'}, not to ${approved} as when the call was checked; nothing was done. Make the call again so that it is checked again.`,
      );
      // The server may judge the call again on where the path leads now (see the gate's predicted paths).
      return { ...refusal, meta: { ...refusal.meta, pathMoved: true } };
    }
  }
  return undefined;
}
