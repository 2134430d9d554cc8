import { Argument, type Command } from 'commander';
import { COMPLETION_SHELLS, type CompletionShell, completionScript } from '../completion/completion-script.ts';

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('print the shell completion script for bash, zsh or fish (commands, subcommands, options)')
    .addArgument(new Argument('<shell>', 'the shell').choices(COMPLETION_SHELLS))
    .addHelpText(
      'after',
      '\nLoad it in this shell:  source <(molf completion bash)   (zsh: the same, after compinit)\n' +
        '                        molf completion fish | source\n' +
        'Or once for every new shell:\n' +
        '  molf completion bash > ~/.local/share/bash-completion/completions/molf\n' +
        // biome-ignore lint/suspicious/noTemplateCurlyInString: zsh's own ${…}
        '  molf completion zsh > "${fpath[1]}/_molf"\n' +
        '  molf completion fish > ~/.config/fish/completions/molf.fish',
    )
    .action((shell: CompletionShell) => {
      process.stdout.write(completionScript(shell));
    });
}
