import { existsSync } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTempDir, startTestServer } from './testing/test-link.ts';

/** Files this process holds open, as Linux lists them. */
async function openFiles(): Promise<string[]> {
  const links = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  return links.filter((link) => link !== '');
}

async function withTakenPort(run: (port: number) => Promise<void>): Promise<void> {
  const blocker = createNetServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const { port } = blocker.address() as AddressInfo;
  try {
    await run(port);
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
}

describe('listening', () => {
  it('fails with address_in_use, and does not crash, when the port is taken', async () => {
    await withTakenPort(async (port) => {
      await using data = await createTempDir();
      await expect(startTestServer({ dataDir: data.path, port })).rejects.toMatchObject({
        code: 'address_in_use',
        message: expect.stringContaining(`port ${port} on 127.0.0.1 is already in use`),
      });
    });
  });

  it.runIf(existsSync('/proc/self/fd'))(
    'closes the services it built when the port is taken, leaving no file of the data directory open',
    async () => {
      await withTakenPort(async (port) => {
        await using data = await createTempDir();
        await expect(startTestServer({ dataDir: data.path, port })).rejects.toMatchObject({ code: 'address_in_use' });
        const held = async () => (await openFiles()).filter((file) => file.startsWith(data.path));
        // A file stream closes its descriptor a moment after its end: poll, with a generous deadline.
        const deadline = Date.now() + 10_000;
        while ((await held()).length > 0 && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 10));
        expect(await held()).toEqual([]);
      });
    },
  );
});
