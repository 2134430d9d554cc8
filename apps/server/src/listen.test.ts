import type { AddressInfo } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTempDir, startTestServer } from './testing/test-link.ts';

describe('listening', () => {
  it('fails with address_in_use, and does not crash, when the port is taken', async () => {
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      await using data = await createTempDir();
      await expect(startTestServer({ dataDir: data.path, port })).rejects.toMatchObject({
        code: 'address_in_use',
        message: expect.stringContaining(`port ${port} on 127.0.0.1 is already in use`),
      });
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
