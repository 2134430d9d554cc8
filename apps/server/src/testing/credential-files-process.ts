/**
 * A second process working on a data directory's credential files, as `molf pair` or `molf token`
 * does beside a running server. Prints `ready`, waits for a line on stdin, then does its work and
 * prints the outcome as one JSON line. Tests start it with Node (which runs TypeScript):
 *
 *   node credential-files-process.ts redeem <dataDir> <code> <kind> <name>
 *   node credential-files-process.ts create <dataDir> <count>
 */
import { once } from 'node:events';
import type { Kind } from '@molf/protocol';
import { openCredentialStore } from '../auth/credential-store.ts';
import { openPairingCodeStore } from '../pairing/pairing-code-store.ts';
import { openFileStateDocuments } from '../state/index.ts';

const [command, dataDir = '', ...rest] = process.argv.slice(2);
const documents = openFileStateDocuments({ dataDir });
const credentials = openCredentialStore({ documents });
process.stdout.write('ready\n');
await once(process.stdin, 'data');
process.stdin.pause();

if (command === 'redeem') {
  const [code = '', kind = 'worker', name = 'child'] = rest;
  const result = await openPairingCodeStore({ documents, credentials }).redeem({ code, kind: kind as Kind, name });
  process.stdout.write(`${JSON.stringify({ type: result.type })}\n`);
} else if (command === 'create') {
  const ids: string[] = [];
  for (let index = 0; index < Number(rest[0]); index += 1) {
    ids.push((await credentials.create({ role: 'viewer', label: `child ${index}` })).credential.id);
  }
  process.stdout.write(`${JSON.stringify({ ids })}\n`);
} else {
  process.stderr.write(`unknown command ${command}\n`);
  process.exitCode = 2;
}
