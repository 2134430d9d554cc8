import { createInterface } from 'node:readline';
import type { TerminalStyle } from '../terminal/terminal-style.ts';
import { approvalChoices } from './approval-view.ts';
import type { InputHandlers, InputMode, TerminalInput } from './terminal-input.ts';

/**
 * The chat's input when stdin is not a terminal (a script, a test): one line at a time, with
 * readline. A line answers what waits: a prompt or a command, an approval (`y`, `s`, `a`, `e`, `n`,
 * and the older `o`/`d`), a deny reason, or the number of a session to resume.
 */
export function createPlainInput(
  stdin: NodeJS.ReadableStream,
  stdout: NodeJS.WritableStream,
  handlers: InputHandlers,
  options: { busy: () => boolean; style: TerminalStyle },
): TerminalInput {
  const rl = createInterface({ input: stdin, output: stdout, terminal: false });
  let mode: InputMode = { type: 'prompt' };
  let closed = false;

  const showPrompt = () => {
    if (closed) return;
    switch (mode.type) {
      case 'prompt':
        if (options.busy()) return;
        rl.setPrompt('> ');
        break;
      case 'approval':
        rl.setPrompt(
          `approve [${approvalChoices(mode.approval, mode.rights)
            .map((choice) => choice.key)
            .join('/')}]: `,
        );
        break;
      case 'reason':
        rl.setPrompt('reason (optional): ');
        break;
      case 'patterns':
        rl.setPrompt('allow patterns (one line, space separated): ');
        break;
      case 'pick':
        rl.setPrompt('open which (number, Enter for none)? ');
        break;
    }
    rl.prompt();
  };

  rl.on('line', (line) => {
    switch (mode.type) {
      case 'reason':
        handlers.reason(line.trim());
        return;
      case 'patterns':
        handlers.patterns(line.trim() === '' ? undefined : line.trim().split(/\s+/));
        return;
      case 'pick': {
        const number = Number(line.trim());
        const item = Number.isInteger(number) ? mode.items[number - 1] : undefined;
        handlers.pick(item?.value);
        return;
      }
      default:
        // A prompt, or an answer to an approval: the chat knows which by the mode.
        handlers.submit(line);
    }
  });
  rl.once('close', () => {
    closed = true;
    handlers.eof();
  });

  return {
    mode: () => mode,
    setMode(next) {
      mode = next;
      if (next.type === 'pick') {
        stdout.write(`${next.items.map((item, index) => `  ${index + 1}. ${item.label}`).join('\n')}\n`);
      }
      showPrompt();
    },
    render: () => ({ lines: [] }),
    // `/edit` needs a terminal: on a pipe the chat refuses it before any of these would matter.
    setPrompt: () => {},
    suspend: () => {},
    resume: () => {},
    close() {
      if (closed) return;
      closed = true;
      rl.close();
    },
  };
}
