/**
 * The programs that run other commands, and how each says which: the tables `unwrapCommand` reads.
 * A program listed here has its command found and judged too, so a deny on `rm *` catches
 * `taskset -c 0 rm -rf x`. Option lists are space-separated, short and long forms.
 */

/** Shells: `-c STRING` runs a command line, no script and no `-c` reads the program from standard input. */
export const SHELLS: ReadonlySet<string> = new Set([
  'bash',
  'sh',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'fish',
  'ash',
  'yash',
  'busybox',
]);

/** Shell options that take the next word as their value (`bash -o pipefail`, `--rcfile FILE`). */
export const SHELL_OPTIONS_WITH_VALUE: ReadonlySet<string> = new Set([
  '-o',
  '+o',
  '-O',
  '+O',
  '--rcfile',
  '--init-file',
]);

/** Interpreters: with no script and no `-c`/`-e` they read their program from standard input. */
export const INTERPRETERS: ReadonlySet<string> = new Set([
  'python',
  'python2',
  'python3',
  'pypy',
  'pypy3',
  'node',
  'nodejs',
  'perl',
  'ruby',
  'php',
  'lua',
  'luajit',
  'Rscript',
  'tclsh',
  'osascript',
  'pwsh',
  'powershell',
  'irb',
  'ipython',
]);

/**
 * Wrappers that change nothing about which program runs or what it may touch: `timeout 5 npm test`
 * is judged as `npm test` (the wrapper itself can only be denied, never asked about).
 */
export const TRANSPARENT_WRAPPERS: ReadonlySet<string> = new Set([
  'timeout',
  'time',
  'nice',
  'ionice',
  'nohup',
  'stdbuf',
  'setsid',
  'command',
  'builtin',
  'exec',
  'env',
  'chrt',
  'taskset',
  'unbuffer',
  'caffeinate',
  'numactl',
]);

/** How a program that runs another command says which one (the `RUNNERS` table). */
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

/** Runners described by their options alone. Those with rules of their own (shells, env, xargs, find, git…) follow. */
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

/** Global options of git before its sub-command that take a value. */
export const GIT_GLOBAL_OPTIONS =
  '-C -c --git-dir --work-tree --namespace --exec-path --config-env --super-prefix --list-cmds';

/**
 * Git configuration keys whose value is a command git runs (`core.pager`, `alias.x = !cmd`,
 * `diff.x.command`…), and keys that name files or directories of code (`core.hooksPath`).
 */
export const GIT_COMMAND_KEY =
  /^(core\.(pager|editor|sshcommand|fsmonitor|askpass|gitproxy)|alias\..+|sequence\.editor|diff\.external|pager\..+|web\.browser|gpg(\..+)?\.program|credential(\..+)?\.helper|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack|vcs)|submodule\..+\.update|.+command|.+cmd|interactive\.difffilter|.+\.(textconv|driver|clean|smudge|process|cmd|helper|program|tool))$/i;
export const GIT_CODE_PATH_KEY =
  /^(core\.hookspath|core\.worktree|include\.path|includeif\..+\.path|init\.templatedir|protocol\.(.+\.)?allow|http\..*ssl.*)$/i;

/** Options of git sub-commands whose value is a command git runs. */
export const GIT_RUNS_VALUE: Readonly<Record<string, string>> = {
  rebase: '-x --exec',
  difftool: '-x --extcmd',
  clone: '-u --upload-pack',
  fetch: '--upload-pack',
  pull: '--upload-pack',
  'ls-remote': '--upload-pack',
  push: '--receive-pack --exec',
  archive: '--exec',
  'filter-branch':
    '--tree-filter --index-filter --msg-filter --env-filter --commit-filter --parent-filter --tag-name-filter --setup',
  'send-email': '--to-cmd --cc-cmd --header-cmd --sendmail-cmd --smtp-server',
  instaweb: '--httpd -d --browser -b',
};

/**
 * Options that take a value, of the wrappers read by rules of their own (`unwrapCommand`): the
 * command starts at the first word that is neither an option nor such a value.
 */
export const WRAPPER_OPTIONS_WITH_VALUE = {
  env: '-u -C -P --unset --chdir',
  xargs:
    '-I -L -n -P -s -d -E -a --max-args --max-procs --arg-file --delimiter --max-chars --max-lines --eof --process-slot-var',
  parallel:
    '-j -S -N -n -I -a -d -E -P -C --jobs --sshlogin --max-procs --arg-file --delimiter --colsep --joblog --results --tmpdir --timeout --delay --retries --load --memfree --halt --tag-string --basefile --workdir --env --return --transfer-file --id --semaphorename --nice --sshloginfile --slf --limit --termseq --resume-failed --sqlmaster --sqlworker --sqlandworker',
  ssh: '-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B',
  su: '-g -G -s --group --supp-group --shell',
  runuser: '-g -G -s -u --group --supp-group --shell --user',
  flock: '-w -E --timeout --conflict-exit-code',
  'git config': '-f --file --blob --type --default --comment',
} as const;

/** The options of `find` and `fd` that run a command for the files found (`find -exec CMD {} ;`). */
export const FIND_EXEC_OPTIONS: Readonly<Record<'find' | 'fd', readonly string[]>> = {
  find: ['-exec', '-execdir', '-ok', '-okdir'],
  fd: ['-x', '--exec', '-X', '--exec-batch'],
};

/** `ssh -o Name=value` options whose value is a command ssh runs locally. */
export const SSH_COMMAND_OPTION = /^\s*(ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand)\s*[=\s]\s*(.*)$/is;

/** gdb's options that take a value; gdb spells long options with one dash or two (`-ex`, `--batch`). */
export const GDB_OPTIONS_WITH_VALUE: ReadonlySet<string> = new Set(
  'x ex iex ix p c d s e D command eval-command init-command init-eval-command pid core directory symbols exec cd data-directory'.split(
    ' ',
  ),
);

/** gdb's options whose value is a gdb command (`-ex 'shell rm x'`, `-ex run`). */
export const GDB_COMMAND_OPTIONS: ReadonlySet<string> = new Set(['ex', 'iex', 'eval-command', 'init-eval-command']);
