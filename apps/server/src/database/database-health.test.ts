import { createMolfClient } from '@molf/client/node';
import { startPostgresCluster } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { createServer } from '../create-server.ts';
import { postgresUnavailable } from '../testing/test-database.ts';
import { createTempDir, TEST_CLIENT_TOKEN, TEST_WORKER_TOKEN, waitFor } from '../testing/test-link.ts';

const unavailable = postgresUnavailable();

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe.skipIf(unavailable !== undefined)(
  `a server on a database that goes away${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('says so on /healthz and /readyz, refuses work with database_unavailable, and recovers when it is back', async () => {
      await using cluster = await startPostgresCluster();
      const url = await cluster.createDatabase('molf');
      await using dir = await createTempDir();
      await using server = await createServer({
        port: 0,
        dataDir: dir.path,
        tokens: { client: TEST_CLIENT_TOKEN, worker: TEST_WORKER_TOKEN },
        database: { url },
      });
      expect(await get(`${server.httpUrl}/readyz`)).toEqual({
        status: 200,
        body: {
          ready: true,
          database: expect.objectContaining({ reachable: true, name: expect.stringContaining('/molf') }),
        },
      });
      expect((await get(`${server.httpUrl}/healthz`)).body).toMatchObject({
        status: 'ok',
        database: { reachable: true },
      });
      await using client = createMolfClient({ url: server.url, token: TEST_CLIENT_TOKEN });
      await client.ready();

      await cluster.stop();
      await waitFor(async () => (await get(`${server.httpUrl}/readyz`)).status === 503, { what: '/readyz saying 503' });
      const health = await get(`${server.httpUrl}/healthz`);
      expect(health).toMatchObject({ status: 200, body: { status: 'degraded', database: { reachable: false } } });
      expect(String((health.body.database as { error?: string }).error)).not.toContain(cluster.password);
      await expect(client.rpc.sessions.list.query({})).rejects.toMatchObject({
        data: { code: 'database_unavailable' },
        message: expect.stringContaining('the database cannot be reached'),
      });

      await cluster.start();
      await waitFor(async () => (await get(`${server.httpUrl}/readyz`)).status === 200, {
        what: '/readyz back to 200',
      });
      expect(await client.rpc.sessions.list.query({})).toMatchObject({ sessions: [] });
    });
  },
);
