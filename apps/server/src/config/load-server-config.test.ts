import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { loadServerConfigFile, toCronSettings, toModelSettings } from './load-server-config.ts';

describe('loadServerConfigFile', () => {
  it('says in words what is wrong with a file that is not JSONC, with its line and column', async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'config.jsonc');
    await writeFile(path, '{\n  "model": "openai/gpt-4.1"\n  "ollamaHost": "gpu:11434"\n}');
    await expect(loadServerConfigFile(path)).rejects.toMatchObject({
      code: 'config_invalid',
      message: `${path}: line 3, column 3: a comma is missing between two entries`,
    });
  });

  it('names the setting a schema refuses with its line and column, and a name that is not allowed by where it is', async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'config.jsonc');
    await writeFile(path, '{\n  // limits\n  "agent": { "maxSteps": 0 },\n  "colour": "red"\n}');
    await expect(loadServerConfigFile(path)).rejects.toMatchObject({
      message: `${path}: "agent.maxSteps": Too small: expected number to be >=1 (line 3, column 26)`,
    });
    await writeFile(path, '{\n  "model": "fake/m",\n  "colour": "red"\n}');
    await expect(loadServerConfigFile(path)).rejects.toMatchObject({
      message: `${path}: the file: Unrecognized key: "colour" (line 3, column 3)`,
    });
  });

  it('reads the cron settings: a lower minimum interval in seconds and a default zone', async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'config.jsonc');
    await writeFile(path, '{ "cron": { "minIntervalSeconds": 10, "timezone": "Europe/Berlin" } }');
    expect(toCronSettings(await loadServerConfigFile(path))).toEqual({
      minIntervalMs: 10_000,
      timezone: 'Europe/Berlin',
    });
    for (const cron of ['{ "minIntervalSeconds": 0 }', '{ "timezone": "Mars/Olympus" }', '{ "every": "5m" }']) {
      await writeFile(path, `{ "cron": ${cron} }`);
      await expect(loadServerConfigFile(path), cron).rejects.toMatchObject({
        code: 'config_invalid',
        message: expect.stringMatching(/config\.jsonc: "cron/),
      });
    }
  });

  it('reads the title model into the model settings, and refuses one that is not provider/model', async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'config.jsonc');
    await writeFile(path, '{ "model": "openai/gpt-4.1", "titleModel": "openai/gpt-4.1-mini" }');
    expect(toModelSettings(await loadServerConfigFile(path), {}).models).toMatchObject({
      defaultModel: 'openai/gpt-4.1',
      titleModel: 'openai/gpt-4.1-mini',
    });
    await writeFile(path, '{ "titleModel": "gpt-4.1-mini" }');
    await expect(loadServerConfigFile(path)).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(/config\.jsonc: "titleModel": use provider\/model/),
    });
  });

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

  it('reads notify targets, normalising their URLs', async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'config.jsonc');
    await writeFile(
      path,
      JSON.stringify({
        notify: {
          publicUrl: 'https://molf.example/base',
          linkTtlMinutes: 5,
          targets: [
            { type: 'webhook', url: 'https://hooks.example/molf', headers: { 'X-Secret': 'abc' } },
            { type: 'ntfy', url: 'http://ntfy.lan/molf-approvals', token: 'tk_123' },
          ],
        },
      }),
    );
    expect(await loadServerConfigFile(path)).toEqual({
      notify: {
        publicUrl: 'https://molf.example/base',
        linkTtlMinutes: 5,
        targets: [
          { type: 'webhook', url: 'https://hooks.example/molf', headers: { 'X-Secret': 'abc' } },
          { type: 'ntfy', url: 'http://ntfy.lan/molf-approvals', token: 'tk_123' },
        ],
      },
    });
  });

  it.each([
    [
      { targets: [{ type: 'email', url: 'https://x' }] },
      /"notify\.targets\.0\.type": a target's "type" must be "webhook" or "ntfy"/,
    ],
    [
      { targets: [{ type: 'ntfy', url: 'ntfy.lan/topic' }] },
      /"notify\.targets\.0\.url": an ntfy topic url must be an http\(s\) URL/,
    ],
    [{ targets: [{ type: 'webhook', url: 'ftp://x/y' }] }, /"notify\.targets\.0\.url": .*must use http or https/],
    [{ targets: [{ type: 'webhook', url: 'https://user:pw@x/y' }] }, /must not hold a user or password/],
    [
      { targets: [{ type: 'webhook', url: 'https://x', headers: { 'X-A': 'line\nbreak' } }] },
      /"notify\.targets\.0\.headers\.X-A": .*one line/,
    ],
    [{ targets: [{ type: 'ntfy', url: 'https://x', tokn: 'typo' }] }, /"notify\.targets\.0": .*tokn/],
    [{ linkTtlMinutes: 90, targets: [] }, /"notify\.linkTtlMinutes": .*60/],
    [{ publicUrl: 'https://molf.example/a,b', targets: [] }, /"notify\.publicUrl": publicUrl must not contain commas/],
    [{ publicUrl: 'https://molf.example/?x=1', targets: [] }, /"notify\.publicUrl": publicUrl must not have a query/],
    [{ publicUrl: 'https://molf.example' }, /"notify\.targets": /],
  ])('refuses the notify section %j with a clear message', async (notify, message) => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'config.jsonc');
    await writeFile(path, JSON.stringify({ notify }));
    await expect(loadServerConfigFile(path)).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(message),
    });
  });
});
