/**
 * How a program that runs another command says which one. Option lists are space-separated, short and
 * long forms. The analysis finds the command a runner starts and judges it too, so a deny on `rm *`
 * catches `taskset -c 0 rm -rf x`.
 */
export type RunnerSpec = {
  /** Options that take a value (skipped). */
  values?: string;
  /** Options whose value is a command line a shell runs (`script -c`, `tar --to-command`, `rsync -e`). */
  source?: string;
  /** Options after which no command of the line runs (`taskset -p PID`, `prlimit --pid`). */
  noCommand?: string;
  /** Operands before the command (`timeout DURATION`, `taskset MASK`, `chroot DIR`). Default 0. */
  leading?: number;
  /**
   * Where the command is: `operands` (the words after the options, the default), `joined` (those
   * words joined into one line a shell runs: `watch`, `sg`), or `none` (only `source` options run
   * commands; options may then also follow operands).
   */
  command?: 'operands' | 'joined' | 'none';
  /** `NAME=value` words may stand before the command (`sudo`). */
  assignments?: boolean;
  /** Options whose value is `NAME=value` set in the command's environment (`systemd-run -E`). */
  environment?: string;
  /**
   * The runner's own rules decide (`"npx vitest *": "allow"`): the command it runs counts only
   * for deny, so a deny on `rm *` still catches `npx rm -rf x`.
   */
  judgedByRunner?: true;
};

const GIT_GLOBAL_VALUES = '-C -c --git-dir --work-tree --namespace --exec-path --config-env --super-prefix --list-cmds';

/** Runners described by their options alone. Special cases (shells, env, xargs, find, git…) are in unwrap-command. */
export const RUNNERS: Readonly<Record<string, RunnerSpec>> = {
  sudo: {
    values:
      '-u -g -C -D -h -p -r -t -T -U -R -a -c --user --group --chdir --chroot --host --prompt --role --type --close-from --other-user --command-timeout --auth-type --login-class',
    assignments: true,
  },
  doas: { values: '-u -C' },
  pkexec: { values: '--user' },
  nice: { values: '-n --adjustment' },
  ionice: {
    values: '-c -n -p -P -u --class --classdata --pid --pgid --uid',
    noCommand: '-p -P -u --pid --pgid --uid',
  },
  stdbuf: { values: '-i -o -e --input --output --error' },
  nohup: {},
  setsid: {},
  exec: { values: '-a' },
  time: { values: '-f -o --format --output' },
  builtin: {},
  timeout: { values: '-s -k --signal --kill-after', leading: 1 },
  chroot: { values: '--userspec --groups', leading: 1 },
  taskset: { noCommand: '-p --pid', leading: 1 },
  chrt: {
    values: '-T -P -D --sched-runtime --sched-period --sched-deadline',
    noCommand: '-p --pid -m --max',
    leading: 1,
  },
  strace: {
    values:
      '-o -e -p -s -u -E -a -b -I -O -S -P -X -U --output --trace --signal --status --user --env --attach --string-limit --summary-columns --trace-path --const-print-style',
  },
  ltrace: { values: '-o -e -p -s -u -a -l -L -n -w -x -A -D -F --output --library --config --indent --align' },
  unshare: {
    values:
      '-S -G -R -w --setuid --setgid --root --wd --map-user --map-group --map-users --map-groups --propagation --setgroups',
  },
  nsenter: { values: '-t -S -G --target --setuid --setgid --env' },
  'systemd-run': {
    environment: '-E --setenv',
    values:
      '-p -u -M -H --property --unit --machine --host --description --slice --uid --gid --nice --working-directory --on-active --on-boot --on-startup --on-unit-active --on-unit-inactive --on-calendar --on-clock-change --on-timezone-change --timer-property --path-property --socket-property --service-type --expand-environment',
  },
  valgrind: {},
  fakeroot: { values: '-l -s -i -b --lib --faked' },
  firejail: { environment: '--env' },
  prlimit: { values: '-p -o --pid --output', noCommand: '-p --pid' },
  numactl: {
    values:
      '-C -N -m -i -p -P -w --physcpubind --cpunodebind --membind --interleave --preferred --preferred-many --weighted-interleave',
  },
  setpriv: {
    values:
      '--reuid --regid --ruid --rgid --euid --egid --groups --inh-caps --ambient-caps --bounding-set --securebits --pdeathsig --selinux-label --apparmor-profile --landlock-access --landlock-rule --rlimit',
  },
  chpst: { values: '-u -U -b -e -/ -n -l -L -m -d -o -p -f -c -r -t' },
  'xvfb-run': {
    values: '-n -s -f -e -p -w --server-num --server-args --auth-file --error-file --xauth-protocol --wait',
  },
  unbuffer: {},
  'dbus-run-session': {},
  setarch: { leading: 1 },
  linux32: {},
  linux64: {},
  catchsegv: {},
  proxychains: { values: '-f' },
  proxychains4: { values: '-f' },
  torsocks: { values: '-u -p -a -P --user --pass --address --port' },
  caffeinate: { values: '-t -w' },
  entr: { source: '-s' },
  // `-a`, `-p` and `-w` take optional values attached to them.
  rlwrap: { values: '-b -C -D -f -F -g -h -H -l -O -P -q -s -S -t -z' },
  script: {
    source: '-c --command',
    values: '-E -I -O -B -T -m --echo --log-in --log-out --log-io --log-timing --logging-format --output-limit',
    command: 'none',
  },
  // `-d[=permanent]` takes an optional value attached to it.
  watch: { values: '-n --interval -q --equexit', command: 'joined' },
  tar: {
    source: '--to-command -I --use-compress-program -F --info-script --new-volume-script --rsh-command --rmt-command',
    values: '-f -C -T -X -b -H -K -L -N -V --file --directory --files-from --exclude-from --blocking-factor --format',
    command: 'none',
  },
  rsync: {
    source: '-e --rsh --rsync-path',
    values: '-f -T -B -M --filter --exclude --include --exclude-from --include-from --files-from --log-file --temp-dir',
    command: 'none',
  },
  scp: { source: '-S', values: '-P -i -F -o -c -l -J', command: 'none' },
  sort: {
    source: '--compress-program',
    values: '-k -t -S -T -o --key --field-separator --buffer-size',
    command: 'none',
  },
  zip: { source: '-TT --unzip-command', values: '-b -n -t -x -i -P', command: 'none' },
  man: { source: '-P --pager --html', values: '-C -L -M -S -e -m -p -R', command: 'none' },
  rg: { source: '--pre', values: '-A -B -C -m -g -t -T -M -j -e -f -r --glob --type --max-count', command: 'none' },
  split: {
    source: '--filter',
    values: '-a -b -C -l -n -t --suffix-length --bytes --line-bytes --lines --number',
    command: 'none',
  },
  install: { source: '--strip-program', values: '-m -o -g -S -t --mode --owner --group --suffix', command: 'none' },
  make: {
    source: '--eval -E',
    values: '-C -f -I -j -l -o -W --directory --file --include-dir --jobs',
    command: 'none',
  },
  eatmydata: {},
  corepack: {},
  npx: { values: '-p --package -c --call', source: '-c --call', judgedByRunner: true },
  pnpx: { values: '-p --package', judgedByRunner: true },
  bunx: { values: '-p --package', judgedByRunner: true },
  uvx: { values: '--from --with --python -p', judgedByRunner: true },
  'nix-shell': { source: '--run --command', values: '-p -A -I --arg --argstr --packages --attr', command: 'none' },
};

/** Runners named by a program and a sub-command: `npm exec CMD`, `uv run CMD`, `bundle exec CMD`. */
export const SUBCOMMAND_RUNNERS: Readonly<Record<string, RunnerSpec>> = {
  'npm exec': { values: '-p --package -w --workspace', source: '-c --call', judgedByRunner: true },
  'npm x': { values: '-p --package -w --workspace', source: '-c --call', judgedByRunner: true },
  // `pnpm exec -c 'cmd'` runs its operand in a shell.
  'pnpm exec': { values: '-C --dir --filter -F', source: '-c --shell-mode', judgedByRunner: true },
  'pnpm recursive': { leading: 1, judgedByRunner: true },
  'uv tool': { leading: 1, values: '--from --with --python -p', judgedByRunner: true },
  'nx exec': { judgedByRunner: true },
  'lerna exec': { values: '--scope --ignore --concurrency', judgedByRunner: true },
  // go runs these options' values as programs (`go test -exec CMD`, `go build -toolexec CMD`).
  'go run': { source: '-exec -toolexec', command: 'none' },
  'go test': { source: '-exec -toolexec -vettool', command: 'none' },
  'go build': { source: '-toolexec', command: 'none' },
  'go vet': { source: '-vettool -toolexec', command: 'none' },
  'go install': { source: '-toolexec', command: 'none' },
  'pnpm dlx': { values: '--package', judgedByRunner: true },
  'yarn exec': { judgedByRunner: true },
  'yarn dlx': { values: '-p --package', judgedByRunner: true },
  'bun x': { values: '-p --package', judgedByRunner: true },
  'bun run': { judgedByRunner: true },
  'uv run': {
    values: '--with --python -p --package --project --directory --env-file --group --extra',
    judgedByRunner: true,
  },
  'poetry run': { judgedByRunner: true },
  'pdm run': { judgedByRunner: true },
  'hatch run': { judgedByRunner: true },
  'pipx run': { values: '--spec --python', judgedByRunner: true },
  'conda run': { values: '-n --name -p --prefix --cwd', judgedByRunner: true },
  'mamba run': { values: '-n --name -p --prefix --cwd', judgedByRunner: true },
  'bundle exec': { judgedByRunner: true },
  'nix develop': { source: '-c --command', values: '--profile -i', command: 'none', judgedByRunner: true },
  'nix shell': { source: '-c --command', values: '-f --file', command: 'none', judgedByRunner: true },
  'nix run': { judgedByRunner: true },
  'dotnet exec': { judgedByRunner: true },
};

/** Global options of git before its sub-command. */
export const GIT_GLOBAL_OPTIONS = GIT_GLOBAL_VALUES;

/**
 * Git configuration keys whose value is a command git runs (`core.pager`, `alias.x = !cmd`,
 * `diff.x.command`…), and keys that name files or directories of code (`core.hooksPath`).
 */
export const GIT_COMMAND_KEY =
  /^(core\.(pager|editor|sshcommand|fsmonitor|askpass|gitproxy)|alias\..+|sequence\.editor|diff\.external|pager\..+|web\.browser|gpg(\..+)?\.program|credential(\..+)?\.helper|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack|vcs)|submodule\..+\.update|.+command|.+cmd|interactive\.difffilter|.+\.(textconv|driver|clean|smudge|process|cmd|helper|program|tool))$/i;
export const GIT_CODE_PATH_KEY =
  /^(core\.hookspath|core\.worktree|include\.path|includeif\..+\.path|init\.templatedir|protocol\.(.+\.)?allow|http\..*ssl.*)$/i;
