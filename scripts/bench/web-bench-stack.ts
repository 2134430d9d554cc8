/**
 * The web benchmark's stack, as the browser tests build it (packages/e2e/src/web/web-stack.ts; a
 * script may not import another package's files): a real server serving the built page, a
 * registered worker, the fake LLM, a Node client for setting things up, and the system's headless
 * Chromium through playwright-core. `close` ends all of them, each even if another fails.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import type { WorkerId } from '@molf/protocol';
import { createServer, type MolfServer } from '@molf/server';
import { type FakeLlm, SYSTEM_CHROMIUM, startFakeLlm } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { type Browser, type BrowserContext, type CDPSession, chromium, type Page } from 'playwright-core';
import { pageProbeScript, type TextWatch } from './web-page-probe.ts';

const TOKENS = { client: 'molf_c_bench-client-token-0123456789', worker: 'molf_w_bench-worker-token-0123456789' };

/** The browser tests' flags, and precise `performance.memory` figures (else rounded and cached). */
const CHROMIUM = {
  executablePath: SYSTEM_CHROMIUM.executablePath,
  args: [...SYSTEM_CHROMIUM.args, '--enable-precise-memory-info'],
};

export type BenchPage = { context: BrowserContext; page: Page; cdp: CDPSession; errors: string[] };

export type WebBenchStack = {
  llm: FakeLlm;
  server: MolfServer;
  client: MolfClient;
  workerId: WorkerId;
  httpUrl: string;
  browser: Browser;
  /** A new browser context (empty cache and storage) logged in, and a page in it with the probe. */
  newPage(options?: { watch?: TextWatch }): Promise<BenchPage>;
  close(): Promise<void>;
};

export async function startWebBenchStack(options: {
  /** The built page to serve. */
  webRoot: string;
}): Promise<WebBenchStack> {
  const root = await mkdtemp(join(tmpdir(), 'molf-web-bench-'));
  const cleanups: Array<() => Promise<unknown>> = [() => rm(root, { recursive: true, force: true })];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: unknown) => process.stderr.write(`closing failed: ${String(error)}\n`));
    }
    cleanups.length = 0;
  };
  try {
    const llm = await startFakeLlm();
    cleanups.push(() => llm.close());
    const workdir = join(root, 'project');
    await mkdir(workdir);
    const server = await createServer({
      port: 0,
      dataDir: join(root, 'data'),
      tokens: TOKENS,
      models: { defaultModel: 'fake/m', custom: { fake: { baseURL: llm.baseURL } } },
      webRoot: options.webRoot,
    });
    cleanups.push(() => server.close());
    const worker = await createWorker({ serverUrl: server.url, token: TOKENS.worker, workdir, name: 'bench' });
    cleanups.push(() => worker.close());
    await worker.registered;
    const client = createMolfClient({ url: server.url, token: TOKENS.client });
    cleanups.push(() => client.close());
    await client.ready();
    const browser: Browser = await chromium.launch({ ...CHROMIUM, headless: true });
    cleanups.push(() => browser.close());
    return {
      llm,
      server,
      client,
      workerId: worker.workerId as WorkerId,
      httpUrl: server.httpUrl,
      browser,
      async newPage({ watch } = {}) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        context.setDefaultTimeout(120_000);
        await context.addInitScript({
          content: pageProbeScript({ token: TOKENS.client, ...(watch === undefined ? {} : { watch }) }),
        });
        const page = await context.newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(String(error)));
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(message.text());
        });
        const cdp = await context.newCDPSession(page);
        return { context, page, cdp, errors };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
