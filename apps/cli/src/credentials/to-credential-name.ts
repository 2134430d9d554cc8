import { MAX_CREDENTIAL_NAME_LENGTH } from '@molf/protocol';

/**
 * A name the server takes for a credential, made from text nobody chose as one (a host name, a
 * project directory's name, a worker's label): each run of control or invisible format characters
 * (a newline in a directory's name) becomes a space, and it is cut to the longest length the server
 * takes, never inside a character. `fallback` when nothing printable is left.
 */
export function toCredentialName(text: string, fallback: string): string {
  const printable = text.replace(/\p{C}+/gu, ' ').trim();
  let name = '';
  for (const symbol of printable) {
    if (name.length + symbol.length > MAX_CREDENTIAL_NAME_LENGTH) break;
    name += symbol;
  }
  name = name.trimEnd();
  return name === '' ? fallback : name;
}
