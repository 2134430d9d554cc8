import type { IncomingMessage } from 'node:http';
import { readBoundedText } from './read-bounded-text.ts';

/**
 * Reads and drops a request body of at most `maxBytes`; false (and the request destroyed once the
 * caller answered) when it is larger, so that nobody can make the server read an endless body.
 */
export async function readBoundedBody(request: IncomingMessage, maxBytes: number): Promise<boolean> {
  return (await readBoundedText(request, maxBytes)) !== undefined;
}
