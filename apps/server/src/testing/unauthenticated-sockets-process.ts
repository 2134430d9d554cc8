/**
 * Run inside a network namespace (see `ipv6-namespace.ts`): starts a server on `host`, opens one
 * WebSocket that never authenticates from each of `addresses` in turn (each upgrade answered before
 * the next is opened), and prints as one JSON line the addresses the server refused a socket of
 * (its warning "too many unauthenticated connections"), then stops. Tests start it with Node:
 *
 *   node unauthenticated-sockets-process.ts <host> <address>...
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from '../create-server.ts';
import { createMemoryLogger } from './memory-logger.ts';

const [host = '::1', ...addresses] = process.argv.slice(2);
const dataDir = await mkdtemp(join(tmpdir(), 'molf-sockets-'));
const { logger, lines } = await createMemoryLogger();
const server = await createServer({ host, port: 0, dataDir, logger, tokens: { client: 'molf_c_sockets-process' } });
const sockets: Socket[] = [];
try {
  const { port } = new URL(server.httpUrl);
  for (const localAddress of addresses) {
    const upgrade = request({
      host,
      port,
      path: '/?connectionParams=1',
      localAddress,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        'Sec-WebSocket-Version': '13',
      },
    });
    upgrade.end();
    // The server admits (or refuses) a socket as it answers the upgrade, in this same process.
    const [, socket] = (await once(upgrade, 'upgrade')) as [unknown, Socket];
    socket.on('error', () => {});
    sockets.push(socket);
  }
  const refused = lines
    .filter((line) => String(line.msg).startsWith('too many unauthenticated connections'))
    .map((line) => line.remoteAddress);
  process.stdout.write(`${JSON.stringify({ refused })}\n`);
} finally {
  for (const socket of sockets) socket.destroy();
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
}
