import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Lints one probe file with the repository's ESLint config; the messages of the layer rule only. */
async function layerErrors(directory: string, source: string): Promise<string[]> {
  const path = join(root, directory, `layer-probe-${randomBytes(4).toString('hex')}.ts`);
  await writeFile(path, `${source}\nexport {};\n`);
  try {
    const eslint = new ESLint({ cwd: root, overrideConfigFile: join(root, 'config/eslint.config.js') });
    const [result] = await eslint.lintFiles([path]);
    return (result?.messages ?? [])
      .filter((message) => message.ruleId === '@typescript-eslint/no-restricted-imports')
      .map((message) => message.message);
  } finally {
    await rm(path, { force: true });
  }
}

describe('the layer rules (config/eslint.config.js)', () => {
  it('refuse a package importing an app', async () => {
    expect(await layerErrors('packages/protocol/src', "import { createServer } from '@molf/server';")).toEqual([
      expect.stringContaining('Packages never import apps'),
    ]);
    expect(await layerErrors('packages/permissions/src', "import { createWorker } from '@molf/worker';")).toHaveLength(
      1,
    );
  });

  it('let the client import the router type and nothing else from the server', async () => {
    expect(await layerErrors('packages/client/src', "import type { AppRouter } from '@molf/server/router';")).toEqual(
      [],
    );
    expect(await layerErrors('packages/client/src', "import { createServer } from '@molf/server';")).toEqual([
      expect.stringContaining('only by its router type'),
    ]);
    expect(await layerErrors('packages/client/src', "import { AppRouter } from '@molf/server/router';")).toEqual([
      expect.stringContaining("Only the router's type"),
    ]);
  });

  it('refuse the worker importing the server', async () => {
    expect(await layerErrors('apps/worker/src', "import { createServer } from '@molf/server';")).toEqual([
      expect.stringContaining('The worker never imports the server'),
    ]);
    expect(await layerErrors('apps/worker/src', "import type { AppRouter } from '@molf/server/router';")).toHaveLength(
      1,
    );
  });

  it("refuse the server's own code importing another app, but let its test kit start a worker", async () => {
    expect(await layerErrors('apps/server/src', "import { createWorker } from '@molf/worker';")).toHaveLength(1);
    expect(await layerErrors('apps/server/src/testing', "import { createWorker } from '@molf/worker';")).toEqual([]);
  });

  it("refuse reaching into another package's files, by name or by a relative path", async () => {
    expect(await layerErrors('apps/cli/src', "import { MolfError } from '@molf/protocol/src/errors.ts';")).toEqual([
      expect.stringContaining('never its files'),
    ]);
    expect(
      await layerErrors('apps/cli/src', "import { MolfError } from '../../../packages/protocol/src/errors.ts';"),
    ).toEqual([expect.stringContaining('must not leave its package')]);
  });
});

describe('the server layers', () => {
  it('refuse sockets and the transport in the services', async () => {
    expect(await layerErrors('apps/server/src/agent', "import { WebSocketServer } from 'ws';")).toEqual([
      expect.stringContaining('Sockets belong to apps/server/src/transport'),
    ]);
    expect(
      await layerErrors('apps/server/src/services', "import { serveWebSocket } from '../transport/index.ts';"),
    ).toEqual([expect.stringContaining('Services never import the transport')]);
    expect(await layerErrors('apps/server/src/transport', "import { WebSocketServer } from 'ws';")).toEqual([]);
  });
});

describe('the client core', () => {
  it('refuses Node-only modules outside its Node entry', async () => {
    expect(await layerErrors('packages/client/src', "import { WebSocket } from 'ws';")).toEqual([
      expect.stringContaining('runs in browsers'),
    ]);
    expect(await layerErrors('packages/client/src', "import { readFile } from 'node:fs/promises';")).toEqual([
      expect.stringContaining('runs in browsers'),
    ]);
  });
});
