import { setTimeout as delay } from 'node:timers/promises';
import { toErrorResult, toolDefinitions } from '@molf/protocol';
import { defineToolHandler } from './tool-handler.ts';

export const echoTool = defineToolHandler({
  definition: toolDefinitions.echo,
  async run(args, { signal }) {
    if (args.delayMs !== undefined && args.delayMs > 0) {
      try {
        await delay(args.delayMs, undefined, { signal });
      } catch {
        return toErrorResult('cancelled', 'echo was cancelled while waiting');
      }
    }
    // Whole, never cut: echo exists to carry payloads of known size across the link.
    return { output: args.text, meta: { truncated: false } };
  },
});
