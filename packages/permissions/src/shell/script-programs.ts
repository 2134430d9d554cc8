/**
 * sed and awk programs can run commands and read or write files of their own choosing
 * (`sed 's/x/y/e'`, `sed 'w file'`, `awk '{ system("…") }'`). These scanners find such effects so that
 * an allowed `sed *` or `awk *` cannot do them unasked; an undefined result means the program only
 * transforms text.
 */

/** Skips a sed regular expression or replacement delimited by `delimiter`; returns the index after it. */
function skipDelimited(script: string, from: number, delimiter: string): number {
  let index = from;
  while (index < script.length && script[index] !== delimiter) {
    if (script[index] === '\\') index += 1;
    else if (script[index] === '\n') return -1;
    index += 1;
  }
  return index < script.length ? index + 1 : -1;
}

/** Skips a sed address (`3`, `$`, `/re/I`, `\%re%`, `1,5`, `0~2`, `addr,+3`, `!`). */
function skipAddress(script: string, from: number): number {
  let index = from;
  for (;;) {
    const char = script[index];
    if (char === undefined) return index;
    if (/[0-9$,!~+ \t]/.test(char)) index += 1;
    else if (char === '/') {
      index = skipDelimited(script, index + 1, '/');
      if (index === -1) return script.length;
      while (/[IM]/.test(script[index] ?? '')) index += 1;
    } else if (char === '\\' && script[index + 1] !== undefined) {
      index = skipDelimited(script, index + 2, script[index + 1] as string);
      if (index === -1) return script.length;
      while (/[IM]/.test(script[index] ?? '')) index += 1;
    } else return index;
  }
}

/** Skips to the end of the current sed command (`;`, a newline or `}`). */
function skipCommandEnd(script: string, from: number): number {
  let index = from;
  while (index < script.length && !/[;\n}]/.test(script[index] as string)) index += 1;
  return index;
}

/** What a sed program does beyond editing text, or undefined. */
export function findSedEffect(script: string): string | undefined {
  let index = 0;
  while (index < script.length) {
    while (/[\s;{}]/.test(script[index] ?? '')) index += 1;
    if (index >= script.length) return undefined;
    index = skipAddress(script, index);
    const command = script[index];
    if (command === undefined) return undefined;
    index += 1;
    switch (command) {
      case '{':
      case '}':
        break;
      case '#':
      case 'a':
      case 'i':
      case 'c': {
        // Text to the end of the line (a `\` at the end continues it).
        while (index < script.length && script[index] !== '\n') index += script[index] === '\\' ? 2 : 1;
        break;
      }
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'q':
      case 'Q':
      case 'l':
      case 'L':
      case 'v':
        index =
          command === ':'
            ? script.indexOf('\n', index) === -1
              ? script.length
              : script.indexOf('\n', index)
            : skipCommandEnd(script, index);
        break;
      case 'r':
      case 'R':
        return 'the sed program reads a file it names';
      case 'w':
      case 'W':
        return 'the sed program writes a file it names';
      case 'e':
        return 'the sed program runs a command';
      case 's':
      case 'y': {
        const delimiter = script[index];
        if (delimiter === undefined || delimiter === '\n' || delimiter === '\\')
          return 'the sed program cannot be read';
        index = skipDelimited(script, index + 1, delimiter);
        if (index !== -1) index = skipDelimited(script, index, delimiter);
        if (index === -1) return 'the sed program cannot be read';
        if (command === 's') {
          const flags = /^[0-9A-Za-z]*/.exec(script.slice(index))?.[0] ?? '';
          if (flags.includes('e')) return 'the sed program runs a command (s///e)';
          if (flags.includes('w')) return 'the sed program writes a file it names (s///w)';
          index += flags.length;
        }
        break;
      }
      default:
        if (!/[dDgGhHxnNpPz=F]/.test(command)) return `the sed program has a command Molf does not know (${command})`;
    }
  }
  return undefined;
}

/** What an awk program does beyond printing text, or undefined. */
export function findAwkEffect(program: string): string | undefined {
  if (/\bsystem\s*\(/.test(program)) return 'the awk program runs a command (system)';
  if (/\|\s*getline\b|\|&|\bprintf?\b[^;{}\n]*\|(?!\|)/.test(program)) return 'the awk program runs a command (a pipe)';
  if (/\bprintf?\b[^;{}\n]*>/.test(program)) return 'the awk program writes a file it names';
  if (/\bgetline\b[^;{}\n]*</.test(program)) return 'the awk program reads a file it names';
  return undefined;
}
