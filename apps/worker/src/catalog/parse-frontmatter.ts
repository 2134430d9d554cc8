/** Frontmatter as parsed: only JSON values (what the snapshot can carry). */
export type Frontmatter = Record<string, unknown>;

/**
 * Parses YAML frontmatter into an object of JSON values, or says why it can't: the YAML library's
 * first error (with its line and column), or that the frontmatter is not a mapping.
 *
 * `yaml` is imported here, on the first file that has frontmatter, not with the worker: an idle
 * worker's memory is measured, and a project without skills or agents must not pay for a parser.
 */
export async function safeParseFrontmatter(
  source: string,
): Promise<{ ok: true; value: Frontmatter } | { ok: false; error: string }> {
  const { parseDocument } = await import('yaml');
  let value: unknown;
  try {
    const document = parseDocument(source);
    const [first] = document.errors;
    if (first !== undefined) return { ok: false, error: `invalid YAML: ${firstLine(first.message)}` };
    // Aliases are expanded at most 100 times (the library's default): no "billion laughs".
    // The JSON round trip drops what JSON can't carry (`.inf` becomes null) and fails on a cycle.
    value = JSON.parse(JSON.stringify(document.toJS({ maxAliasCount: 100 }) ?? {})) as unknown;
  } catch (error) {
    return { ok: false, error: `invalid YAML: ${firstLine((error as Error).message)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'the frontmatter is not a YAML mapping of keys to values' };
  }
  return { ok: true, value: value as Frontmatter };
}

/** The library's messages go on with a quote of the line and a caret: the first line says it all. */
function firstLine(message: string): string {
  return (message.split('\n', 1)[0] ?? message).replace(/:$/, '');
}
