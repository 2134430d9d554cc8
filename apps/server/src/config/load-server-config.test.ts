import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { loadServerConfigFile } from './load-server-config.ts';

describe('loadServerConfigFile', () => {
  it('reads allowedOrigins, normalised', async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'config.jsonc');
    await writeFile(path, '{ // browsers that may connect\n "allowedOrigins": ["https://App.example:443"] }');
    expect(await loadServerConfigFile(path)).toEqual({ allowedOrigins: ['https://app.example'] });
  });

  it('refuses an allowed origin that is not one, naming the file and the entry', async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'config.jsonc');
    await writeFile(path, '{ "allowedOrigins": ["https://app.example/login"] }');
    await expect(loadServerConfigFile(path)).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(/config\.jsonc: "allowedOrigins\.0": .*http\(s\):\/\/host\[:port\]/),
    });
  });
});
