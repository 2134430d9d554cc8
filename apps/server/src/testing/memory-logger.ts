import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@molf/logging';

/** A logger whose JSON lines a test reads back from `lines` (level `debug` and up). */
export async function createMemoryLogger(): Promise<{ logger: Logger; lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: await createLogger({ name: 'server', level: 'debug', console: 'json', destination }), lines };
}
