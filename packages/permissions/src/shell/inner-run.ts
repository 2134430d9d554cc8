import type { ShellWord } from './shell-words.ts';

/**
 * Something a command or a piece of code hands on to run, found without analyzing it. The modules
 * that find these return them; the analyser (`analyze-shell-line.ts`) records or analyzes each in
 * turn, in the order given, one level deeper, so that no finder ever calls back into it.
 */
export type InnerRun =
  /** A command with these words (`sudo CMD`, `xargs CMD`, `find … -exec CMD ;`), judged as if the line held it. */
  | {
      type: 'command';
      words: ShellWord[];
      /** What runs it, added to the command's `via`: `sudo`, `find -exec`. */
      via: string;
      /** Molf made the words up (`find -delete` removes files as `rm -rf` does): see `SimpleCommand.derived`. */
      derived?: true;
      /** Only a deny of it counts: the runner's own rules decide (`npx vitest`, see `RunnerSpec.judgedByRunner`). */
      onlyDeny?: true;
    }
  /** A command line a shell parses and runs (`bash -c '…'`, `ssh host …`, `eval …`, a heredoc fed to `sh`). */
  | {
      type: 'line';
      source: string;
      /** What runs it, added to the `via` of what is found in it; none for code standing in the line itself. */
      via?: string;
    }
  /** Text the parser could not read: scanned for commands of which only a deny counts (the line asks anyway). */
  | { type: 'scan'; source: string }
  /** Why what runs cannot be fully judged: the line asks. */
  | { type: 'problem'; problem: string };
