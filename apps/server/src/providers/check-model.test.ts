import { createMolfClient } from '@molf/client/node';
import type { SessionEvent } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { startTestLink, TEST_CLIENT_TOKEN, waitFor } from '../testing/test-link.ts';
import { checkModel } from './check-model.ts';
import { createModelResolver } from './resolve-model.ts';

const custom = { baseURL: 'http://127.0.0.1:1/v1' };
const NO_ANTHROPIC_KEY = "no API key for anthropic: set ANTHROPIC_API_KEY in the server's environment (or its config)";

describe('checkModel', () => {
  const settings = { defaultModel: 'lab/small', custom: { lab: custom }, env: { OPENAI_API_KEY: 'sk-test' } };
  const resolver = createModelResolver(settings);
  const check = (options: { prompt?: string; session?: string }) =>
    checkModel({ resolver, defaultModel: settings.defaultModel, ...options });

  it('takes the model a turn would take: the prompt’s, else the session’s, else the default', () => {
    expect(check({})).toEqual({ model: 'lab/small', ready: true });
    expect(check({ session: 'openai/gpt-4.1' })).toEqual({ model: 'openai/gpt-4.1', ready: true });
    expect(check({ prompt: 'lab/big', session: 'openai/gpt-4.1' })).toEqual({ model: 'lab/big', ready: true });
  });

  it('names the environment variable a built-in provider’s key is missing from, in the words the turn would fail with', () => {
    expect(check({ session: 'anthropic/claude-sonnet-4-5' })).toEqual({
      model: 'anthropic/claude-sonnet-4-5',
      ready: false,
      problem: { code: 'model_not_configured', message: NO_ANTHROPIC_KEY, missing: 'ANTHROPIC_API_KEY' },
    });
  });

  it('says so for an unknown provider and for no model at all', () => {
    expect(check({ prompt: 'nobody/x' })).toMatchObject({
      model: 'nobody/x',
      ready: false,
      problem: { code: 'model_not_found', message: expect.stringContaining('unknown provider "nobody"') },
    });
    const bare = checkModel({ resolver: createModelResolver({ env: {} }) });
    expect(bare).toEqual({
      ready: false,
      problem: { code: 'model_not_configured', message: expect.stringContaining('--model provider/model') },
    });
  });
});

describe('models.check and a prompt without a key', () => {
  it('tells a client before the prompt what to set, and a prompt sent anyway ends with that one-line error', async () => {
    await using link = await startTestLink({
      server: { models: { defaultModel: 'fake/m', custom: { fake: custom }, env: {} } },
    });
    await using client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN });
    const session = await client.rpc.sessions.create.mutate({
      workerId: link.worker.workerId,
      model: 'anthropic/claude-sonnet-4-5',
    });
    expect(await client.rpc.models.check.query({ sessionId: session.sessionId })).toEqual({
      model: 'anthropic/claude-sonnet-4-5',
      ready: false,
      problem: { code: 'model_not_configured', message: NO_ANTHROPIC_KEY, missing: 'ANTHROPIC_API_KEY' },
    });
    expect(await client.rpc.models.check.query({})).toEqual({ model: 'fake/m', ready: true });
    await expect(client.rpc.models.check.query({ sessionId: 'no-such-session' })).rejects.toMatchObject({
      data: { code: 'session_not_found' },
    });
    const anthropic = (await client.rpc.models.list.query()).providers.find((entry) => entry.name === 'anthropic');
    expect(anthropic).toMatchObject({ configured: false, missing: 'ANTHROPIC_API_KEY' });

    const events: SessionEvent[] = [];
    const subscription = client.rpc.sessions.events.subscribe(
      { sessionId: session.sessionId },
      { onData: (envelope) => events.push(envelope.data) },
    );
    try {
      await client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'hello' });
      await waitFor(() => events.some((event) => event.type === 'turn.ended'), { what: 'turn.ended' });
      expect(events.filter((event) => event.type === 'error')).toEqual([
        expect.objectContaining({ type: 'error', code: 'model_not_configured', message: NO_ANTHROPIC_KEY }),
      ]);
      expect(events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'error' });
    } finally {
      subscription.unsubscribe();
    }
  });
});
