/**
 * The web client's test kit: a real server serving the built page, a real worker, the fake LLM and
 * a real headless Chromium (the system's, driven by playwright-core). Every browser a test opens is
 * closed with the stack.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type MolfServer } from '@molf/server';
import { type FakeLlm, SYSTEM_CHROMIUM, startFakeLlm } from '@molf/testkit';
import { webDistDir } from '@molf/web/dist-dir';
import { createWorker, type MolfWorker } from '@molf/worker';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const WEB_TOKENS = {
  client: 'molf_c_web-client-token-0123456789',
  worker: 'molf_w_web-worker-token-0123456789',
};

export type WebStack = AsyncDisposable & {
  llm: FakeLlm;
  server: MolfServer;
  worker: MolfWorker;
  /** The worker's project directory. */
  workdir: string;
  browser: Browser;
  /** The link `molf up` prints: the page's address with the client token in the fragment. */
  loginUrl: string;
  /** Stops the server (the page and the worker lose their link)… */
  stopServer(): Promise<void>;
  /** …and starts it again on the same port and data directory. */
  startServerAgain(): Promise<void>;
  /** A new browser context (its own storage: another "client") and a page in it. */
  newPage(options?: {
    width?: number;
    height?: number;
  }): Promise<{ context: BrowserContext; page: Page; errors: string[] }>;
};

export async function startWebStack(
  options: {
    serverOptions?: Record<string, unknown>;
    /** Files of the project, written before the worker starts (`.mcp.json`, …). */
    files?: Record<string, string | Uint8Array>;
  } = {},
): Promise<WebStack> {
  const root = await mkdtemp(join(tmpdir(), 'molf-web-'));
  const workdir = join(root, 'project');
  await mkdir(workdir);
  for (const [name, content] of Object.entries(options.files ?? {})) await writeFile(join(workdir, name), content);
  const llm = await startFakeLlm();
  const cleanups: Array<() => Promise<unknown>> = [() => rm(root, { recursive: true, force: true }), () => llm.close()];
  const dispose = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  try {
    const serverConfig = {
      dataDir: join(root, 'data'),
      tokens: WEB_TOKENS,
      models: { defaultModel: 'fake/m', custom: { fake: { baseURL: llm.baseURL, models: ['m', 'big'] } } },
      webRoot: webDistDir,
      ...options.serverOptions,
    };
    let server = await createServer({ ...serverConfig, port: 0 });
    const port = server.port;
    cleanups.push(() => server.close());
    const worker = await createWorker({ serverUrl: server.url, token: WEB_TOKENS.worker, workdir, name: 'web-test' });
    cleanups.push(() => worker.close());
    await worker.registered;
    const browser = await chromium.launch({ ...SYSTEM_CHROMIUM, args: [...SYSTEM_CHROMIUM.args], headless: true });
    cleanups.push(() => browser.close());
    return {
      llm,
      get server() {
        return server;
      },
      worker,
      workdir,
      browser,
      loginUrl: `${server.httpUrl}/#token=${WEB_TOKENS.client}`,
      stopServer: () => server.close(),
      async startServerAgain() {
        server = await createServer({ ...serverConfig, port });
      },
      async newPage({ width = 1280, height = 800 } = {}) {
        const context = await browser.newContext({ viewport: { width, height } });
        // Deadlines for a loaded machine: a step waits as long as it must, and fails only on a hang.
        context.setDefaultTimeout(120_000);
        const page = await context.newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(String(error)));
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(message.text());
        });
        return { context, page, errors };
      },
      [Symbol.asyncDispose]: dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** Waits on a condition with a deadline meant for a loaded machine, not a budget. */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Opens a new session of the stack's worker in `page` (logged in) and returns its id. */
export async function openNewSession(page: Page): Promise<string> {
  await page.getByTestId('new-session').click();
  await page.waitForURL(/\/s\/[^/]+$/);
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() ?? '');
  await page.getByTestId('prompt').waitFor();
  return sessionId;
}

/** Types a prompt and sends it with Enter. */
export async function sendPrompt(page: Page, text: string): Promise<void> {
  await page.getByTestId('prompt').fill(text);
  await page.getByTestId('prompt').press('Enter');
}
