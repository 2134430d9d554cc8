import { createRequire } from 'node:module';
import type { Query, Tree } from 'web-tree-sitter';

/**
 * A loaded bash grammar. Loading is asynchronous (WebAssembly); parsing afterwards is synchronous
 * and cheap, so one parser serves every evaluation in a process.
 */
export type ShellParser = {
  /** A syntax tree, or undefined when parsing took longer than `timeoutMs`. The caller deletes the tree. */
  parse(
    source: string,
    options: {
      timeoutMs: number;
      /** The clock `timeoutMs` is measured by, in milliseconds. Default: `performance.now()`. */
      now?: (() => number) | undefined;
    },
  ): Tree | undefined;
  /**
   * Finds, natively and in document order, every node the analysis reads: simple commands,
   * declarations, redirected statements, variable assignments, loop variables, heredoc bodies and
   * arithmetic (capture names say which).
   */
  statements: Query;
};

let loading: Promise<ShellParser> | undefined;

/** Loads tree-sitter-bash once per process. */
export function loadShellParser(): Promise<ShellParser> {
  loading ??= (async () => {
    // Imported here, with the grammar: a process that judges no shell line loads neither.
    const { Language, Parser, Query } = await import('web-tree-sitter');
    const require = createRequire(import.meta.url);
    await Parser.init();
    const language = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    const parser = new Parser();
    parser.setLanguage(language);
    // The first parses run in a cold WebAssembly engine and can take tens of milliseconds; warm it
    // up here so the per-line time limit measures the line, not the start-up.
    for (let round = 0; round < 3; round += 1) {
      parser
        .parse(
          'FOO=1 sudo -u x git push origin main | grep -v "$(id)" && bash -c \'ls; echo `pwd`\' <<EOF\n$(x)\nEOF\n',
        )
        ?.delete();
    }
    const statements = new Query(
      language,
      '(command) @command (declaration_command) @declaration (unset_command) @declaration' +
        ' (redirected_statement) @redirected (variable_assignment) @assignment (heredoc_body) @heredoc' +
        ' (file_redirect) @redirect (for_statement variable: (variable_name) @loopvar)' +
        // Code the parser leaves in words, and where bash evaluates words as arithmetic (`$(( ))`,
        // `(( ))`, `for (( ))`, subscripts, `[[ a -eq b ]]`, `${x:offset}`) or as names (`[ -v a[i] ]`).
        // No pattern with an anonymous child (`(expansion ":")`): those cost time quadratic in the
        // nesting depth.
        ' (command_substitution) @substitution (expansion) @expansion (arithmetic_expansion) @arithmetic' +
        ' (compound_statement) @compound (c_style_for_statement initializer: (_) @arithmetic)' +
        ' (c_style_for_statement condition: (_) @arithmetic) (c_style_for_statement update: (_) @arithmetic)' +
        ' (subscript index: (_) @arithmetic) (binary_expression operator: (test_operator)) @comparison' +
        ' (unary_expression (test_operator)) @comparison',
    );
    return {
      statements,
      parse(source, { timeoutMs, now = () => performance.now() }) {
        const deadline = now() + timeoutMs;
        const tree = parser.parse(source, null, {
          // Returning true cancels the parse (the typings say void; the runtime reads the value).
          progressCallback: (() => now() > deadline) as () => void,
        });
        if (tree === null) {
          parser.reset();
          return undefined;
        }
        return tree;
      },
    };
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
