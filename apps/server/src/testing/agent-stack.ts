import { createMolfClient, type MolfClient } from '@molf/client/node';
import type { Logger } from '@molf/logging';
import type { SessionEvent } from '@molf/protocol';
import { type FakeLlm, type FakeTurn, startFakeLlm } from '@molf/testkit';
import type { WorkerConfig } from '@molf/worker';
import type { AgentSettings } from '../agent/agent-runner.ts';
import type { NotifyOptions } from '../notify/index.ts';
import type { ModelPrices } from '../providers/model-prices.ts';
import type { CronSettings } from '../services/create-server-services.ts';
import type { ServerTool } from '../tools/index.ts';
import { createTestDatabase, TEST_STORE_ENV } from './test-database.ts';
import { startTestLink, TEST_CLIENT_TOKEN, waitFor } from './test-link.ts';

/** A server and a real worker, the fake LLM behind the real provider code, and a client. */
export type Stack = AsyncDisposable & {
  llm: FakeLlm;
  link: Awaited<ReturnType<typeof startTestLink>>;
  client: MolfClient;
};

export async function startStack(
  options: {
    turns?: FakeTurn[];
    permissions?: string;
    defaultModel?: string | null;
    /** The server's title model (`models.titleModel`). Default none. */
    titleModel?: string;
    agent?: AgentSettings;
    serverTools?: ServerTool[];
    worker?: Partial<WorkerConfig>;
    attachments?: Record<string, 'none' | 'images' | 'images-and-pdf'>;
    /** Model prices, as the server config's `prices`. Default none. */
    prices?: ModelPrices;
    notify?: NotifyOptions;
    cron?: CronSettings;
    logger?: Logger;
    /** Keep sessions and events in this PostgreSQL database (see test-database.ts). Default: files. */
    databaseUrl?: string;
  } = {},
): Promise<Stack> {
  // The stack tests run a second time on PostgreSQL (the `stack-postgres` project of vitest.config.ts).
  const database =
    options.databaseUrl === undefined && process.env[TEST_STORE_ENV] === 'postgres'
      ? await createTestDatabase()
      : undefined;
  const databaseUrl = options.databaseUrl ?? database?.url;
  const llm = await startFakeLlm({ turns: options.turns ?? [] });
  const link = await startTestLink({
    server: {
      models: {
        ...(options.defaultModel === null ? {} : { defaultModel: options.defaultModel ?? 'fake/test-model' }),
        custom: { fake: { baseURL: llm.baseURL } },
        ...(options.titleModel === undefined ? {} : { titleModel: options.titleModel }),
        ...(options.attachments === undefined ? {} : { attachments: options.attachments }),
        ...(options.prices === undefined ? {} : { prices: options.prices }),
      },
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(options.serverTools === undefined ? {} : { serverTools: options.serverTools }),
      ...(options.notify === undefined ? {} : { notify: options.notify }),
      ...(options.cron === undefined ? {} : { cron: options.cron }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(databaseUrl === undefined ? {} : { database: { url: databaseUrl, maxConnections: 4 } }),
    },
    ...(options.worker === undefined ? {} : { worker: options.worker }),
  });
  if (options.permissions !== undefined) {
    await link.server.permissions.writeText(link.worker.workerId, options.permissions);
  }
  const client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN });
  await client.ready();
  return {
    llm,
    link,
    client,
    async [Symbol.asyncDispose]() {
      try {
        await client.close();
        await link[Symbol.asyncDispose]();
      } finally {
        await llm.close();
        await database?.[Symbol.asyncDispose]();
      }
    },
  };
}

/** Collects a session's events as a client sees them. */
export function follow(client: MolfClient, sessionId: string) {
  const events: SessionEvent[] = [];
  const subscription = client.rpc.sessions.events.subscribe(
    { sessionId },
    { onData: (envelope) => events.push(envelope.data) },
  );
  const turnsEnded = () => events.filter((event) => event.type === 'turn.ended').length;
  return {
    events,
    types: () => events.map((event) => event.type),
    turnEnded: (count = 1) => waitFor(() => turnsEnded() >= count, { what: `${count} turn.ended` }),
    [Symbol.dispose]: () => subscription.unsubscribe(),
  };
}

export async function newSession(stack: Stack) {
  return stack.client.rpc.sessions.create.mutate({ workerId: stack.link.worker.workerId });
}

/** The stored results of a session's calls to one tool, oldest first. */
export async function toolMessages(stack: Stack, sessionId: string, toolName: string) {
  const { messages } = await stack.client.rpc.sessions.get.query({ sessionId });
  return messages.filter((message) => message.role === 'tool' && message.toolName === toolName);
}
