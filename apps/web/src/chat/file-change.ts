/** What an `edit_file` or `write_file` call changes, read from its arguments (before it runs). */
export type FileChange = {
  path: string;
  /** Each replacement, or the whole new content of a write (its `before` is empty). */
  hunks: Array<{ before: string; after: string }>;
  kind: 'edit' | 'write';
};

export function fileChangeOf(toolName: string, args: Record<string, unknown>): FileChange | undefined {
  const path = typeof args.path === 'string' ? args.path : undefined;
  if (path === undefined) return undefined;
  if (toolName === 'write_file' && typeof args.content === 'string') {
    return { path, kind: 'write', hunks: [{ before: '', after: args.content }] };
  }
  if (toolName !== 'edit_file') return undefined;
  if (Array.isArray(args.edits)) {
    const hunks = args.edits.flatMap((edit: unknown) => {
      const { oldString, newString } = (edit ?? {}) as Record<string, unknown>;
      return typeof oldString === 'string' && typeof newString === 'string'
        ? [{ before: oldString, after: newString }]
        : [];
    });
    return { path, kind: 'edit', hunks };
  }
  if (typeof args.oldString === 'string' && typeof args.newString === 'string') {
    return { path, kind: 'edit', hunks: [{ before: args.oldString, after: args.newString }] };
  }
  return undefined;
}
