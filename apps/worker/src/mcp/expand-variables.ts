/**
 * `${NAME}` and `${NAME:-default}`, as in a POSIX shell: the default (literal text up to the first
 * `}`, so it may hold `:`, `/` and spaces but not a nested `${…}`) is used when the variable is
 * unset or empty. What a variable holds is inserted as it is, never expanded again.
 */
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** A text with its variables replaced, and the variables it needed that are not set (in order, once each). */
export type ExpandedText = { text: string; missing: string[] };

/**
 * Expands the variables of one `.mcp.json` value from `env`; `${WORKDIR}` is the worker's workdir
 * whatever the environment says. A variable without a default that is not set is left out of the
 * text and named in `missing`; one set to "" is "".
 */
export function expandVariables(value: string, options: { env: NodeJS.ProcessEnv; workdir: string }): ExpandedText {
  const missing: string[] = [];
  const text = value.replace(VARIABLE, (_match, name: string, fallback: string | undefined) => {
    const found = name === 'WORKDIR' ? options.workdir : options.env[name];
    if (fallback !== undefined) return found === undefined || found === '' ? fallback : found;
    if (found !== undefined) return found;
    if (!missing.includes(name)) missing.push(name);
    return '';
  });
  return { text, missing };
}
