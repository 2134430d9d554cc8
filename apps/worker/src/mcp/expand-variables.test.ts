// biome-ignore-all lint/suspicious/noTemplateCurlyInString: .mcp.json's own ${VAR} syntax, kept as written
import { describe, expect, it } from 'vitest';
import { expandVariables } from './expand-variables.ts';

const options = {
  env: { TOKEN: 'abc', EMPTY: '', NESTED: '${TOKEN}', WORKDIR: '/elsewhere' },
  workdir: '/work/project',
};

describe('.mcp.json variables', () => {
  it.each([
    ['Bearer ${TOKEN}', 'Bearer abc'],
    ['${TOKEN:-fallback}', 'abc'],
    ['${UNSET:-fallback}', 'fallback'],
    ['${EMPTY:-fallback}', 'fallback'],
    ['${EMPTY}', ''],
    ['${UNSET:-}', ''],
    ['${UNSET:-http://127.0.0.1:8080/mcp}', 'http://127.0.0.1:8080/mcp'],
    ['${UNSET:-a note: with / and spaces}', 'a note: with / and spaces'],
    ['${WORKDIR}/data and ${WORKDIR:-x}', '/work/project/data and /work/project'],
    ['$TOKEN and ${not-a-name} stay', '$TOKEN and ${not-a-name} stay'],
  ])('expand %s to %s', (value, expected) => {
    expect(expandVariables(value, options)).toEqual({ text: expected, missing: [] });
  });

  it('never expand what a variable or a default holds', () => {
    expect(expandVariables('${NESTED}', options).text).toBe('${TOKEN}');
    expect(expandVariables('${UNSET:-$TOKEN}', options).text).toBe('$TOKEN');
    // No nesting: the default ends at the first }, and what follows is text.
    expect(expandVariables('${UNSET:-${TOKEN}}', options).text).toBe('${TOKEN}');
  });

  it('name each unset variable without a default once', () => {
    expect(expandVariables('${A} ${B:-b} ${A} ${C}', options)).toEqual({ text: ' b  ', missing: ['A', 'C'] });
  });
});
