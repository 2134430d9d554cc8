import { optionSet, readOptions } from './command-options.ts';
import type { ShellWord } from './shell-words.ts';
import { GIT_GLOBAL_OPTIONS } from './wrapper-tables.ts';

/**
 * Options that take a value and may stand before the sub-command of programs people write rules
 * for by sub-command (`"git push *": "deny"`, `"docker rm *": "deny"`). Flags need no listing.
 */
const GLOBAL_OPTIONS: Readonly<Record<string, string>> = {
  git: GIT_GLOBAL_OPTIONS,
  docker: '--context -c -H --host --config -l --log-level --tlscacert --tlscert --tlskey',
  podman: '--connection -c --url --root --runroot --log-level --storage-driver',
  npm: '--prefix -w --workspace --userconfig --globalconfig --registry --loglevel --cache',
  pnpm: '-C --dir -F --filter --workspace-root --loglevel --reporter',
  yarn: '--cwd --use-yarnrc --cache-folder',
  kubectl: '-n --namespace --context --cluster --kubeconfig -s --server --user --token -l --selector',
  helm: '-n --namespace --kube-context --kubeconfig --registry-config',
  cargo: '-C --config --manifest-path --color -Z',
  gh: '-R --repo',
  uv: '--directory --project --cache-dir --python --config-file --color',
  poetry: '-C --directory -P --project',
  bun: '--cwd',
  terraform: '-chdir',
};

/**
 * The words of a command with the global options before its sub-command left out: `git -C . push
 * --force` is also `git push --force`, so that a deny on `git push --force*` catches it. Undefined
 * when there are none.
 */
export function withoutGlobalOptions(words: readonly ShellWord[], program: string): ShellWord[] | undefined {
  const list = Object.hasOwn(GLOBAL_OPTIONS, program) ? GLOBAL_OPTIONS[program] : undefined;
  if (list === undefined || words.length < 2) return undefined;
  const read = readOptions(words, { start: 1, withValue: optionSet(list), stopAtOperand: true });
  if (read.operandsStart <= 1 || read.operandsStart >= words.length) return undefined;
  return [words[0] as ShellWord, ...words.slice(read.operandsStart)];
}
