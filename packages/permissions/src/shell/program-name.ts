/**
 * The program a command word names, without its directory: `/usr/bin/sudo` and `./sudo` run as
 * `sudo` does as far as the rules and the wrapper tables are concerned.
 */
export function programName(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash === -1 ? word : word.slice(slash + 1);
}
