import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from '@molf/server';
import { createWorker } from '@molf/worker';
const tokens = { client: 'molf_c_' + 'a'.repeat(32), worker: 'molf_w_' + 'b'.repeat(32) };
const server = await createServer({ port: 0, dataDir: await mkdtemp(join(tmpdir(), 'p-')), tokens });
const worker = await createWorker({ serverUrl: server.url, token: tokens.worker, workdir: await mkdtemp(join(tmpdir(), 'w-')) });
await worker.registered;
const inflight = Number(process.argv[2] ?? 100);
const total = Number(process.argv[3] ?? 20000);
const call = async () => { const r = await server.dispatcher.dispatch({ workerId: worker.workerId, toolName: 'echo', args: { text: 'x' }, timeoutMs: 10_000 }); if (r.output !== 'x') throw new Error('bad'); };
for (let rep = 0; rep < 3; rep++) {
let issued = 0;
const t0 = performance.now();
await Promise.all(Array.from({ length: inflight }, async () => { while (issued < total) { issued++; await call(); } }));
const ms = performance.now() - t0;
console.log(`inflight ${inflight}: ${Math.round(total / ms * 1000)} calls/s`);
}
await worker.close(); await server.close();
