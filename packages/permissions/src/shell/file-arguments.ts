import { dirname, join } from 'node:path/posix';
import { optionSet, type ParsedOption, readOptions } from './command-options.ts';
import { findAwkEffect, findSedEffect } from './script-programs.ts';
import { type ShellWord, staticWord } from './shell-words.ts';

/**
 * What a command's operands are: files it reads (`read`), writes (`write`), the last written and the
 * rest read (`copy`: cp, mv), the first read and a second written (`in-out`: uniq IN OUT), only the
 * first read (`first-read`: a script and its arguments), the first written and the rest read
 * (`archive`: zip OUT IN…), or no files (`none`: URLs, revisions).
 */
type Operands = 'read' | 'write' | 'copy' | 'in-out' | 'first-read' | 'archive' | 'none';

/** How one command names the files it reads and writes. Option lists are space-separated. */
type FileSpec = {
  operands: Operands;
  /** Options that take a value that is no file. */
  values?: string;
  /** Options that take two values (`jq --arg NAME VALUE`). */
  pairs?: string;
  /** Options whose value is a file read / written. */
  reads?: string;
  writes?: string;
  /** Options of `pairs` whose second value is a file read (`jq --slurpfile NAME FILE`). */
  pairReads?: string;
  /** The first operand is a program, pattern or mode, not a file, unless one of these options gave it. */
  firstIsProgram?: string;
  /** Options that make the command also write its operands (`sed -i`). */
  inPlace?: string;
  /** Options that make the command run programs its configuration names (`git diff --ext-diff`). */
  runsConfigured?: string;
  /** `key=value` operands (`dd if=… of=…`). */
  keyed?: Readonly<Record<string, 'read' | 'write'>>;
  /** Why the command writes files rules cannot see (an archive's members), if it does. */
  hiddenWrites?: string;
  /** Where the command's program comes from, to scan it for commands and writes (sed, awk). */
  program?: 'sed' | 'awk';
  /** Long options without a value that change what it does, so that abbreviations are read (`--sym`). */
  flags?: string;
  /** Operands may name a file at a revision (`HEAD:.env`): the path after the colon is read. */
  revisionPaths?: true;
};

const READER = (values = ''): FileSpec => ({ operands: 'read', values });

const GREP: FileSpec = {
  operands: 'read',
  flags: '--recursive --dereference-recursive',
  firstIsProgram: '-e -f --regexp --file',
  values:
    '-A -B -C -m -d -D --after-context --before-context --context --max-count --label --include --exclude --exclude-dir --binary-files --devices --directories --group-separator -e --regexp',
  reads: '-f --file --exclude-from',
};
const CHECKSUM = READER('-a -l --algorithm --length');
const AWK: FileSpec = {
  operands: 'read',
  firstIsProgram: '-f --file',
  values: '-F -v -W --field-separator --assign',
  reads: '-f --file',
  program: 'awk',
};
const DIFF_FLAGS = '--ext-diff';
const GIT_DIFF: FileSpec = {
  // `git log -p -- .env` and `git show HEAD:.env` print the file's content.
  operands: 'read',
  revisionPaths: true,
  writes: '--output',
  runsConfigured: DIFF_FLAGS,
  values:
    '-n -U -S -G -L --max-count --skip --since --until --after --before --author --committer --grep --format --pretty --unified --abbrev --date --encoding --diff-filter --word-diff-regex --src-prefix --dst-prefix --line-prefix --relative',
  reads: '-O',
};
const ARCHIVE_READER: FileSpec = { operands: 'read' };
const COMPRESSORS = new Set(['gzip', 'gunzip', 'bzip2', 'bunzip2', 'xz', 'unxz', 'zstd', 'unzstd', 'lzma', 'unlzma']);

/** The commands whose file arguments Molf understands (listed in the README). */
export const FILE_COMMANDS: Readonly<Record<string, FileSpec>> = {
  cat: READER(),
  tac: READER('-s --separator'),
  nl: READER('-b -d -f -h -i -l -n -s -v -w'),
  head: READER('-n -c --lines --bytes'),
  tail: READER('-n -c -s --lines --bytes --pid --sleep-interval --max-unchanged-stats'),
  less: {
    operands: 'read',
    values: '-b -h -j -p -P -t -T -x -y -z -# --pattern --prompt --tag --shift',
    writes: '-o -O --log-file --LOG-FILE',
    reads: '-k --lesskey-file',
  },
  more: READER('-n'),
  most: READER(),
  wc: { operands: 'read', reads: '--files0-from' },
  sort: {
    operands: 'read',
    values:
      '-k -t -S -T --key --field-separator --buffer-size --temporary-directory --batch-size --parallel --compress-program',
    writes: '-o --output',
    reads: '--files0-from --random-source',
  },
  uniq: { operands: 'in-out', values: '-f -s -w --skip-fields --skip-chars --check-chars' },
  cut: READER('-b -c -d -f --bytes --characters --delimiter --fields --output-delimiter'),
  paste: READER('-d --delimiters'),
  strings: READER('-n -t -e -T --bytes --radix --encoding --target'),
  // `-w[N]` and `--width[=N]` take optional values attached to them.
  od: READER('-A -j -N -S -t --address-radix --skip-bytes --read-bytes --strings --format'),
  xxd: { operands: 'in-out', values: '-c -g -l -o -s -n --cols --groupsize --len --offset --seek --name' },
  hexdump: { operands: 'read', values: '-e -n -s', reads: '-f' },
  hd: { operands: 'read', values: '-e -n -s', reads: '-f' },
  base64: READER('-w --wrap'),
  base32: READER('-w --wrap'),
  basenc: READER('-w --wrap'),
  md5sum: CHECKSUM,
  sha1sum: CHECKSUM,
  sha224sum: CHECKSUM,
  sha256sum: CHECKSUM,
  sha384sum: CHECKSUM,
  sha512sum: CHECKSUM,
  b2sum: CHECKSUM,
  shasum: CHECKSUM,
  cksum: CHECKSUM,
  sum: CHECKSUM,
  file: {
    operands: 'read',
    values: '-e -F -P --exclude --separator --parameter',
    reads: '-m -f --magic-file --files-from',
  },
  diff: {
    operands: 'read',
    values:
      '-x -I -F -L -U -C -W --exclude --ignore-matching-lines --label --show-function-line --horizon-lines --line-format --width --tabsize',
    reads: '-X --exclude-from --from-file --to-file',
  },
  cmp: READER('-i -n --ignore-initial --bytes'),
  comm: READER('--output-delimiter'),
  join: READER('-t -1 -2 -j -o -e -a -v'),
  fold: READER('-w --width'),
  fmt: READER('-w -p -g --width --prefix --goal'),
  expand: READER('-t --tabs'),
  unexpand: READER('-t --tabs'),
  rev: READER(),
  iconv: { operands: 'read', values: '-f -t --from-code --to-code', writes: '-o --output' },
  jq: {
    operands: 'read',
    firstIsProgram: '-f --from-file',
    values: '--indent -L',
    pairs: '--arg --argjson --slurpfile --rawfile',
    pairReads: '--slurpfile --rawfile',
    reads: '-f --from-file',
  },
  yq: {
    operands: 'read',
    firstIsProgram: '--from-file',
    values: '-o -p -I --output-format --input-format --indent',
    reads: '--from-file',
    inPlace: '-i --inplace',
  },
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  rg: {
    operands: 'read',
    firstIsProgram: '-e -f --regexp --file',
    values:
      '-A -B -C -m -g -t -T -M -j -E -e -r --regexp --max-count --glob --iglob --type --type-not --max-columns --threads --encoding --max-depth --max-filesize --sort --sortr --type-add --context-separator --replace --pre --pre-glob --colors --engine',
    reads: '-f --file --ignore-file',
  },
  sed: {
    operands: 'read',
    firstIsProgram: '-e -f --expression --file',
    values: '-l -e --line-length --expression',
    reads: '-f --file',
    inPlace: '-i --in-place',
    program: 'sed',
  },
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  nawk: AWK,
  source: { operands: 'first-read' },
  '.': { operands: 'first-read' },
  zcat: ARCHIVE_READER,
  zless: ARCHIVE_READER,
  zmore: ARCHIVE_READER,
  bzcat: ARCHIVE_READER,
  xzcat: ARCHIVE_READER,
  zstdcat: ARCHIVE_READER,
  gzip: READER('-S --suffix'),
  gunzip: READER('-S --suffix'),
  bzip2: READER(),
  bunzip2: READER(),
  xz: READER(),
  unxz: READER(),
  zstd: { operands: 'read', writes: '-o' },
  zip: { operands: 'archive', values: '-b -n -t -x -i -P --temp-path --suffixes --exclude --include --password' },
  unzip: {
    operands: 'first-read',
    values: '-x -P',
    writes: '-d',
    hiddenWrites: 'unzip writes the files the archive names',
  },
  cp: { operands: 'copy', values: '-S --suffix -Z --context', writes: '-t --target-directory' },
  mv: { operands: 'copy', values: '-S --suffix -Z --context', writes: '-t --target-directory' },
  install: {
    operands: 'copy',
    values: '-m -o -g -S -Z --mode --owner --group --suffix --strip-program',
    writes: '-t --target-directory',
  },
  ln: { operands: 'copy', values: '-S --suffix', writes: '-t --target-directory' },
  tee: { operands: 'write' },
  touch: { operands: 'write', values: '-d -t --date', reads: '-r --reference' },
  truncate: { operands: 'write', values: '-s --size', reads: '-r --reference' },
  chmod: { operands: 'write', firstIsProgram: '--reference', reads: '--reference' },
  chown: { operands: 'write', firstIsProgram: '--reference', reads: '--reference' },
  chgrp: { operands: 'write', firstIsProgram: '--reference', reads: '--reference' },
  shred: { operands: 'write', values: '-n -s --iterations --size --random-source' },
  dd: { operands: 'none', keyed: { if: 'read', of: 'write' } },
  split: {
    operands: 'first-read',
    values: '-a -b -C -l -n -t --suffix-length --bytes --line-bytes --lines --number --additional-suffix --filter',
  },
  csplit: { operands: 'first-read', values: '-b -f -n --suffix-format --prefix --digits' },
  patch: {
    operands: 'none',
    values: '-p -F -B -D -V -Y -z -g --strip --fuzz --prefix --suffix --basename-prefix',
    reads: '-i --input',
    writes: '-o --output -r --reject-file',
    hiddenWrites: 'patch changes the files its input names',
  },
  curl: {
    operands: 'none',
    values:
      '-H -A -e -u -X -m -x -r -w -b -U -d -F --header --user-agent --referer --user --request --max-time --proxy --range --write-out --cookie --connect-timeout --retry --url --data --data-binary --data-ascii --data-urlencode --data-raw --json --form',
    writes: '-o --output -c --cookie-jar -D --dump-header --trace --trace-ascii --stderr --etag-save',
    reads: '-T --upload-file -K --config --cacert --cert -E --key --netrc-file',
  },
  wget: {
    operands: 'none',
    values:
      '-t -T -w -e -U --tries --timeout --wait --header --user-agent --user --password --post-data --method --execute',
    writes: '-O --output-document -o --output-file -a --append-output -P --directory-prefix',
    reads: '-i --input-file --post-file --body-file --load-cookies --certificate --private-key --ca-certificate',
  },
  scp: { operands: 'copy', values: '-P -o -c -l -J -S', reads: '-i -F' },
  rsync: {
    operands: 'copy',
    values:
      '-e -f -B -M -T --rsh --rsync-path --filter --exclude --include --temp-dir --chmod --chown --max-size --min-size --bwlimit --timeout --port --partial-dir --suffix --backup-dir',
    reads: '--exclude-from --include-from --files-from --password-file',
    writes: '--log-file',
  },
  ssh: { operands: 'none', values: '-b -c -D -E -e -I -J -L -l -m -O -o -p -Q -R -S -W -w -B', reads: '-i -F' },
  openssl: { operands: 'none', reads: '-in -key -inkey -CAfile -cert -config', writes: '-out -keyout' },
  gpg: {
    operands: 'read',
    values: '-r -u --recipient --local-user --default-key --homedir',
    writes: '-o --output',
    reads: '--passphrase-file --keyring',
  },
  time: { operands: 'none', writes: '-o --output' },
  find: { operands: 'none', writes: '-fprint -fprint0 -fprintf -fls' },
  make: { operands: 'none', reads: '-f --file --makefile' },
  git: { operands: 'none' },
};

/** Sub-commands of git and how they name files. */
const GIT_COMMANDS: Readonly<Record<string, FileSpec>> = {
  log: GIT_DIFF,
  show: GIT_DIFF,
  diff: GIT_DIFF,
  whatchanged: GIT_DIFF,
  'range-diff': GIT_DIFF,
  'diff-tree': GIT_DIFF,
  'diff-index': GIT_DIFF,
  'diff-files': GIT_DIFF,
  'format-patch': { ...GIT_DIFF, writes: '--output -o --output-directory' },
  grep: { operands: 'none', reads: '-f', runsConfigured: '-O --open-files-in-pager' },
  blame: {
    operands: 'read',
    revisionPaths: true,
    values: '-L -S -C -M --contents --since --ignore-rev --ignore-revs-file --abbrev',
    reads: '--contents --ignore-revs-file',
  },
  annotate: { operands: 'read', revisionPaths: true, values: '-L -S' },
  'cat-file': { operands: 'read', revisionPaths: true, values: '--path --filters --batch' },
  apply: { operands: 'read', hiddenWrites: 'git apply changes the files the patch names' },
  am: { operands: 'read', hiddenWrites: 'git am changes the files the patches name' },
  config: { operands: 'none', writes: '-f --file' },
  // Sub-commands that create a repository or check files out somewhere: a place under .git is a write there.
  init: {
    operands: 'write',
    values: '--template -b --initial-branch --object-format --shared',
    writes: '--separate-git-dir',
  },
  clone: {
    operands: 'copy',
    values: '-b --branch -o --origin --depth -c --config --reference --template -u --upload-pack --filter --jobs -j',
  },
  worktree: { operands: 'none', writes: '--path' },
  archive: { operands: 'none', writes: '-o --output', values: '--format --prefix --remote --exec' },
  'checkout-index': { operands: 'none', writes: '--prefix' },
};

/** Targets that are no files: reading or writing them changes nothing on disk. */
export const DEVICE_TARGETS = new Set([
  '/dev/null',
  '/dev/zero',
  '/dev/stdin',
  '/dev/stdout',
  '/dev/stderr',
  '/dev/tty',
  '/dev/fd/0',
  '/dev/fd/1',
  '/dev/fd/2',
  '/dev/random',
  '/dev/urandom',
  '-',
]);

export type FileArguments = {
  reads: ShellWord[];
  writes: ShellWord[];
  /** Directories whose every file it reads (`grep -r KEY .`, `cp -r dir x`, `tar -c dir`). */
  trees: ShellWord[];
  /** Directories whose every file it reads except hidden ones (`rg KEY`, `git grep KEY`). */
  visibleTrees: ShellWord[];
  /** Why the command does more than its file arguments show. */
  problems: string[];
};

function optionValues(options: readonly ParsedOption[], names: ReadonlySet<string>): ShellWord[] {
  return options
    .filter((option) => names.has(option.name) && option.value !== undefined)
    .map((option) => option.value as ShellWord);
}

/** `tar` in all its spellings: `tar -czf out.tgz dir`, `tar xf a.tar`, `tar --create --file=x …`. */
function tarArguments(words: readonly ShellWord[]): FileArguments {
  const withValue = optionSet(
    '-f -C -T -X -b -H -K -L -N -V -g --file --directory --files-from --exclude-from --blocking-factor --format --listed-incremental',
  );
  let rest = [...words.slice(1)];
  // Old style: a first word of letters is options whose values follow in order (`tar cfz out.tgz dir`:
  // f takes out.tgz, whatever letters come after it).
  const first = rest[0];
  if (first?.isStatic === true && /^[A-Za-z]+$/.test(first.value)) {
    const values = rest.slice(1);
    const expanded: ShellWord[] = [];
    for (const letter of first.value) {
      expanded.push({ ...first, value: `-${letter}` });
      if (withValue.has(`-${letter}`) && values.length > 0) expanded.push(values.shift() as ShellWord);
    }
    rest = [...expanded, ...values];
  }
  const read = readOptions([words[0] as ShellWord, ...rest], { start: 1, withValue, stopAtOperand: false });
  const names = new Set(read.options.map((option) => option.name));
  const creates = ['-c', '-r', '-u', '-A', '--create', '--append', '--update', '--concatenate'].some((name) =>
    names.has(name),
  );
  const extracts = ['-x', '--extract', '--get'].some((name) => names.has(name));
  const archive = optionValues(read.options, optionSet('-f --file'));
  const lists = optionValues(read.options, optionSet('-T --files-from -X --exclude-from'));
  return {
    reads: [...(creates ? read.operands : []), ...(creates ? [] : archive), ...lists],
    writes: creates ? archive : [],
    // An archive of a directory holds every file under it.
    trees: creates ? read.operands : [],
    visibleTrees: [],
    problems: extracts ? ['tar -x writes the files the archive names, which rules cannot see'] : [],
  };
}

/** Whether Molf knows how this command names its files (then its other words are no files). */
export function hasFileSpec(words: readonly ShellWord[]): boolean {
  return (words[0]?.value.split('/').pop() ?? '') === 'tar' || specFor(words) !== undefined;
}

function specFor(words: readonly ShellWord[]): { spec: FileSpec; start: number } | undefined {
  const name = words[0]?.value.split('/').pop() ?? '';
  if (name !== 'git') {
    const spec = Object.hasOwn(FILE_COMMANDS, name) ? FILE_COMMANDS[name] : undefined;
    return spec === undefined ? undefined : { spec, start: 1 };
  }
  const global = readOptions(words, {
    start: 1,
    withValue: optionSet('-C -c --git-dir --work-tree --namespace --exec-path --config-env'),
    stopAtOperand: true,
  });
  const sub = global.operands[0]?.value ?? '';
  const spec = Object.hasOwn(GIT_COMMANDS, sub) ? GIT_COMMANDS[sub] : undefined;
  return spec === undefined ? undefined : { spec, start: global.operandsStart + 1 };
}

const SPEC_OPTIONS = new WeakMap<FileSpec, { withValue: ReadonlySet<string>; flags: ReadonlySet<string> }>();

/** The options of a spec that take a value, and its long flags (for abbreviations); made once per spec. */
function optionsOf(spec: FileSpec): { withValue: ReadonlySet<string>; flags: ReadonlySet<string> } {
  let options = SPEC_OPTIONS.get(spec);
  if (options === undefined) {
    options = {
      // Pairs take two words: the first is read as the value, the second skipped by hand.
      withValue: new Set(
        [spec.values, spec.reads, spec.writes, spec.firstIsProgram, spec.pairs].flatMap((list) => [...optionSet(list)]),
      ),
      flags: new Set([spec.runsConfigured, spec.inPlace, spec.flags].flatMap((list) => [...optionSet(list)])),
    };
    SPEC_OPTIONS.set(spec, options);
  }
  return options;
}

/**
 * The files a simple command reads and writes through its arguments, for the commands Molf
 * understands (FILE_COMMANDS and git's sub-commands); other commands name none.
 */
export function fileArgumentsOf(words: readonly ShellWord[]): FileArguments {
  const name = words[0]?.value.split('/').pop() ?? '';
  if (name === 'tar') return tarArguments(words);
  const found = specFor(words);
  if (found === undefined) return { reads: [], writes: [], trees: [], visibleTrees: [], problems: [] };
  const { spec, start } = found;
  const pairs = optionSet(spec.pairs);
  const { withValue, flags } = optionsOf(spec);
  const expanded: ShellWord[] = [];
  const pairSecond: ShellWord[] = [];
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index] as ShellWord;
    expanded.push(word);
    if (index >= start && pairs.has(word.value)) {
      expanded.push(words[index + 1] as ShellWord);
      const second = words[index + 2];
      if (second !== undefined && optionSet(spec.pairReads).has(word.value)) pairSecond.push(second);
      index += 2;
    }
  }
  const read = readOptions(
    expanded.filter((word) => word !== undefined),
    { start, withValue, stopAtOperand: false, flags },
  );
  const result: FileArguments = {
    reads: [...optionValues(read.options, optionSet(spec.reads)), ...pairSecond],
    writes: optionValues(read.options, optionSet(spec.writes)),
    trees: [],
    visibleTrees: [],
    problems: [],
  };
  const given = new Set(read.options.map((option) => option.name));
  let operands = read.operands;
  const programGiven = [...optionSet(spec.firstIsProgram)].some((option) => given.has(option));
  if (spec.firstIsProgram !== undefined && !programGiven) {
    const program = operands[0];
    operands = operands.slice(1);
    if (program !== undefined && spec.program !== undefined) {
      const effect = program.isStatic
        ? spec.program === 'sed'
          ? findSedEffect(program.value)
          : findAwkEffect(program.value)
        : `the ${spec.program} program is only known when the line runs`;
      if (effect !== undefined) result.problems.push(effect);
    }
  }
  // `sed -f prog.sed`, `awk -f prog.awk`, `make -f -`: a program no rule sees.
  if (spec.program !== undefined && [...optionSet('-f --file')].some((option) => given.has(option))) {
    result.problems.push(`the ${spec.program} program is read from a file, which no rule sees`);
  }
  if (name === 'make') {
    for (const file of optionValues(read.options, optionSet('-f --file --makefile'))) {
      if (!file.isStatic || file.processSubstitution === true || /^(-|\/dev\/(stdin|fd\/\d+))$/.test(file.value)) {
        result.problems.push('make reads a makefile made when the line runs, which no rule sees');
      }
    }
  }
  if (spec.program === 'sed') {
    for (const script of optionValues(read.options, optionSet('-e --expression'))) {
      const effect = script.isStatic ? findSedEffect(script.value) : 'the sed program is only known when the line runs';
      if (effect !== undefined) result.problems.push(effect);
    }
  }
  if (spec.program === 'awk') {
    // `awk '{…}' name=value file`: assignments are no files.
    operands = operands.filter((word) => !(word.isStatic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(word.value)));
  }
  if (spec.keyed !== undefined) {
    for (const word of operands) {
      const equals = word.value.indexOf('=');
      const access = equals === -1 ? undefined : spec.keyed[word.value.slice(0, equals)];
      if (access !== undefined)
        result[access === 'read' ? 'reads' : 'writes'].push({ ...word, value: word.value.slice(equals + 1) });
    }
  }
  switch (spec.operands) {
    case 'read':
      result.reads.push(...(spec.revisionPaths === true ? operands.flatMap(revisionPath) : operands));
      break;
    case 'write':
      result.writes.push(...operands);
      break;
    case 'copy':
      copyArguments(name, operands, read.options, result);
      break;
    case 'in-out':
      if (operands[0] !== undefined) result.reads.push(operands[0]);
      if (operands[1] !== undefined) result.writes.push(operands[1]);
      break;
    case 'first-read':
      if (operands[0] !== undefined) result.reads.push(operands[0]);
      break;
    case 'archive':
      if (operands[0] !== undefined) result.writes.push(operands[0]);
      result.reads.push(...operands.slice(1));
      break;
    case 'none':
      break;
  }
  if ([...optionSet(spec.inPlace)].some((option) => given.has(option))) result.writes.push(...operands);
  // gzip, xz… replace each file by its (de)compressed form unless writing to standard output.
  if (
    COMPRESSORS.has(name) &&
    !['-c', '--stdout', '--to-stdout', '-k', '--keep', '-l', '--list', '-t', '--test'].some((option) =>
      given.has(option),
    )
  ) {
    result.writes.push(...operands);
  }
  for (const flag of optionSet(spec.runsConfigured)) {
    if (given.has(flag)) result.problems.push(`${flag} makes ${name} run a program its configuration names`);
  }
  if (spec.hiddenWrites !== undefined) result.problems.push(`${spec.hiddenWrites}, which rules cannot see`);
  if (name === 'scp' || name === 'rsync') {
    // `host:path` operands are on another machine.
    result.reads = result.reads.filter((word) => !/^[^/]*:/.test(word.value));
    result.writes = result.writes.filter((word) => !/^[^/]*:/.test(word.value));
  }
  if (name === 'curl') result.reads.push(...curlDataFiles(read.options));
  if (name === 'git' && words.some((word) => word.value === '--no-index')) result.reads.push(...operands);
  const trees = treesRead(name, words, read.options, result.reads);
  result[trees.hiddenSkipped ? 'visibleTrees' : 'trees'].push(...trees.directories);
  if (spec.revisionPaths === true) {
    // `git log -L1,5:.env` follows lines of a file.
    for (const range of optionValues(read.options, optionSet('-L'))) {
      const path = range.value.slice(range.value.lastIndexOf(':') + 1);
      if (range.value.includes(':') && path !== '') result.reads.push({ ...range, value: path });
    }
  }
  return result;
}

/** Options that make a command read whole directories, per command (`rg` always does). */
const RECURSIVE_OPTIONS: Readonly<Record<string, string>> = {
  diff: '-r --recursive',
  grep: '-r -R --recursive --dereference-recursive',
  egrep: '-r -R --recursive --dereference-recursive',
  fgrep: '-r -R --recursive --dereference-recursive',
  cp: '-r -R -a --recursive --archive',
  scp: '-r',
  rsync: '-r -a --recursive --archive',
  zip: '-r --recurse-paths',
};
const ALWAYS_RECURSIVE = new Set(['rg']);
/** rg skips hidden files unless told otherwise (and ignored ones, which Molf does not model). */
const RG_READS_HIDDEN = /^(--hidden|-\.|--no-ignore.*|-u+|--unrestricted)$/;

/**
 * The directories a command reads every file of: the paths it reads, when recursive, or the
 * directory it starts from when it names none (`grep -r KEY`, `rg KEY`, `git grep KEY`); and
 * whether it skips hidden files there (rg by default; git grep searches tracked files, and a
 * hidden file is the usual untracked secret).
 */
function treesRead(
  name: string,
  words: readonly ShellWord[],
  options: readonly ParsedOption[],
  reads: readonly ShellWord[],
): { directories: ShellWord[]; hiddenSkipped: boolean } {
  const none = { directories: [], hiddenSkipped: false };
  if (name === 'git') {
    const sub = words.findIndex((word, index) => index > 0 && !word.value.startsWith('-'));
    if (words[sub]?.value === 'grep') {
      const untracked = words.some((word) => /^--(untracked|no-index)$/.test(word.value));
      return { directories: [staticWord('.')], hiddenSkipped: !untracked };
    }
    // `git diff --no-index DIR1 DIR2` compares every file under them.
    return words.some((word) => word.value === '--no-index') ? { directories: [...reads], hiddenSkipped: false } : none;
  }
  const given = new Set(options.map((option) => option.name));
  const recursive =
    ALWAYS_RECURSIVE.has(name) ||
    (Object.hasOwn(RECURSIVE_OPTIONS, name) &&
      [...optionSet(RECURSIVE_OPTIONS[name])].some((option) => given.has(option))) ||
    // `grep -d recurse`, `--directories=recurse`.
    (name.endsWith('grep') &&
      options.some((option) => /^(-d|--directories)$/.test(option.name) && option.value?.value === 'recurse'));
  if (!recursive) return none;
  // `grep -r --include=*.ts KEY .` reads only the files the pattern names.
  if (name.endsWith('grep') && given.has('--include')) return none;
  const hiddenSkipped = name === 'rg' && !words.some((word) => RG_READS_HIDDEN.test(word.value));
  if (reads.length === 0 && (name === 'rg' || name.endsWith('grep'))) {
    return { directories: [staticWord('.')], hiddenSkipped };
  }
  return { directories: [...reads], hiddenSkipped };
}

/** `HEAD:.env`, `:src/a.ts` name a file at a revision; a plain operand may be a path too. */
function revisionPath(word: ShellWord): ShellWord[] {
  if (!word.isStatic) return [word];
  // `HEAD~1`, `@^`, `a..b`, an abbreviated hash: revisions, never file names git would print.
  if (/^(@|[A-Z_]*HEAD)?([~^]\d*)*$|\.\.|^[0-9a-f]{7,40}$/.test(word.value)) return [];
  // Pathspec magic (`:(icase).env`, `:/.env`, `:!x`) or `REV:path`; a pathspec's glob is git's own.
  const magic = /^:(\([^)]*\)|[/!^]+)/.exec(word.value);
  const colon = word.value.indexOf(':');
  const path =
    magic !== null ? word.value.slice(magic[0].length) : colon === -1 ? word.value : word.value.slice(colon + 1);
  if (path === '') return [];
  return [{ ...word, value: path, hasGlob: word.hasGlob || /[*?[]/.test(path) }];
}

/**
 * cp, mv, install, ln, scp, rsync: the last operand (or `-t DIR`) is written, the others read. A
 * destination that is a directory receives each source under its own name, so both are writes;
 * mv also removes its sources (a write), and a hard link makes its source writable under a new
 * name (`ln .git/config x`), so its sources count as written too.
 */
function copyArguments(
  name: string,
  operands: readonly ShellWord[],
  options: readonly ParsedOption[],
  result: FileArguments,
): void {
  const given = new Set(options.map((option) => option.name));
  // `cp -s` makes symbolic links and `cp -l` hard links, as ln does.
  const symbolic =
    (name === 'ln' && (given.has('-s') || given.has('--symbolic'))) ||
    (name === 'cp' && (given.has('-s') || given.has('--symbolic-link')));
  const hardLink = (name === 'ln' && !symbolic) || (name === 'cp' && (given.has('-l') || given.has('--link')));
  const targetDirectories = optionValues(options, optionSet('-t --target-directory'));
  const sources = targetDirectories.length > 0 ? [...operands] : operands.slice(0, -1);
  const destinations = targetDirectories.length > 0 ? targetDirectories : operands.slice(-1);
  if (targetDirectories.length === 0 && operands.length > 1) result.writes.push(...destinations);
  if (sources.length === 0) return;
  // The destination is a directory for sure with -t, several sources, a trailing slash or `.`,
  // and may be one when its name has no extension (`.git`, `bin`); `cp a a.bak` makes a file.
  const intoDirectory = (destination: ShellWord) =>
    targetDirectories.length > 0 ||
    sources.length > 1 ||
    destination.value.endsWith('/') ||
    !/.\.[^./]+$/.test(destination.value.split('/').at(-1) ?? '');
  for (const destination of destinations) {
    if (!destination.isStatic || !intoDirectory(destination)) continue;
    for (const source of sources) {
      const base = source.value.replace(/\/+$/, '').split('/').pop() ?? '';
      if (!source.isStatic || base === '' || /^[^/]*:/.test(destination.value)) continue;
      result.writes.push({ ...destination, value: `${destination.value.replace(/\/+$/, '')}/${base}` });
    }
  }
  if (!symbolic) result.reads.push(...sources);
  if (name === 'mv' || hardLink) result.writes.push(...sources);
  if (symbolic) {
    // What a new link points to can be read and written through it later in the line (`ln -s .git
    // g && echo x > g/config`), and the gate resolves paths before the line runs: the target counts
    // as read and written now. A relative target is relative to the link's directory.
    const destination = destinations[0];
    // A link made in a directory (`ln -s ../.git d/`) resolves its target from there; a destination
    // that may be an existing directory gives both places.
    const linkDirectories =
      targetDirectories.length > 0
        ? targetDirectories.map((directory) => directory.value)
        : destination === undefined
          ? ['.']
          : destination.value.endsWith('/')
            ? [destination.value]
            : [dirname(destination.value), ...(intoDirectory(destination) ? [destination.value] : [])];
    for (const source of sources) {
      for (const directory of linkDirectories) {
        const target = source.value.startsWith('/') ? source : { ...source, value: join(directory, source.value) };
        result.reads.push(target);
        // A link to a directory reaches every file under it.
        result.writes.push(target, { ...target, value: `${join(target.value, '.')}/` });
      }
    }
  }
}

/** `curl -d @file`, `--data-binary @file`, `-F name=@file` / `name=<file`: files curl uploads. */
function curlDataFiles(options: readonly ParsedOption[]): ShellWord[] {
  const files: ShellWord[] = [];
  for (const option of options) {
    const value = option.value;
    if (value === undefined || !value.isStatic) continue;
    if (/^(-d|--data|--data-binary|--data-ascii|--data-urlencode|--json)$/.test(option.name)) {
      const at = value.value.indexOf('@');
      if (at !== -1 && (at === 0 || /^[^=]*=?$/.test(value.value.slice(0, at)))) {
        files.push({ ...value, value: value.value.slice(at + 1) });
      }
    } else if (option.name === '-F' || option.name === '--form') {
      const match = /^[^=]*=[@<]([^;]*)/.exec(value.value);
      if (match !== null) files.push({ ...value, value: match[1] as string });
    }
  }
  return files;
}
