import { createMolfClient } from '@molf/client/node';
import { describe, expect, it } from 'vitest';
import { startTestLink, TEST_CLIENT_TOKEN } from '../testing/test-link.ts';
import { listModels, MAX_RECENT_MODELS } from './list-models.ts';

const custom = { baseURL: 'http://127.0.0.1:1/v1' };

describe('listModels', () => {
  it('lists the default model, then the custom providers’ models, each once', () => {
    const list = listModels({
      settings: {
        defaultModel: 'local/qwen3',
        custom: { local: { ...custom, models: ['qwen3', 'llama3.1:8b'] }, router: { ...custom, models: ['a/b'] } },
        env: {},
      },
    });
    expect(list.defaultModel).toBe('local/qwen3');
    expect(list.models).toEqual([
      { id: 'local/qwen3', provider: 'local', source: 'default' },
      { id: 'local/llama3.1:8b', provider: 'local', source: 'custom' },
      { id: 'router/a/b', provider: 'router', source: 'custom' },
    ]);
  });

  it('counts a built-in provider as configured only with a key (or, for Ollama, a host), and says what to set', () => {
    const bare = listModels({ settings: { env: {} } });
    expect(bare.defaultModel).toBeUndefined();
    expect(bare.models).toEqual([]);
    expect(bare.providers).toEqual([
      {
        name: 'openai',
        builtin: true,
        configured: false,
        hint: expect.stringContaining('OPENAI_API_KEY'),
        missing: 'OPENAI_API_KEY',
      },
      {
        name: 'anthropic',
        builtin: true,
        configured: false,
        hint: expect.stringContaining('ANTHROPIC_API_KEY'),
        missing: 'ANTHROPIC_API_KEY',
      },
      {
        name: 'google',
        builtin: true,
        configured: false,
        hint: expect.stringContaining('GOOGLE_GENERATIVE_AI_API_KEY'),
        missing: 'GOOGLE_GENERATIVE_AI_API_KEY',
      },
      { name: 'ollama', builtin: true, configured: false, hint: expect.stringContaining('OLLAMA_HOST') },
    ]);
    const keyed = listModels({
      settings: {
        keys: { anthropic: 'sk-a' },
        env: { GEMINI_API_KEY: 'g', OLLAMA_HOST: 'gpu:11434', OPENAI_API_KEY: '' },
      },
    });
    expect(keyed.providers.map((provider) => [provider.name, provider.configured])).toEqual([
      ['openai', false],
      ['anthropic', true],
      ['google', true],
      ['ollama', true],
    ]);
  });

  it('adds recent sessions’ models of configured providers only, at most MAX_RECENT_MODELS', () => {
    const many = Array.from({ length: MAX_RECENT_MODELS + 5 }, (_, index) => `openai/m${index}`);
    const list = listModels({
      settings: { defaultModel: 'openai/gpt-4.1', env: { OPENAI_API_KEY: 'sk-test' } },
      recent: ['openai/gpt-4.1', 'anthropic/claude', 'nobody/x', 'openai/has space', ...many],
    });
    expect(list.models[0]).toEqual({ id: 'openai/gpt-4.1', provider: 'openai', source: 'default' });
    const recent = list.models.filter((model) => model.source === 'recent').map((model) => model.id);
    expect(recent).toEqual(many.slice(0, MAX_RECENT_MODELS));
  });

  it('lets a custom provider named like a built-in one replace it', () => {
    const list = listModels({ settings: { custom: { ollama: { ...custom, models: ['qwen3'] } }, env: {} } });
    expect(list.providers.filter((provider) => provider.name === 'ollama')).toEqual([
      { name: 'ollama', builtin: false, configured: true },
    ]);
  });
});

describe('models.list', () => {
  it('answers a client with the server’s models and the models its sessions were set to', async () => {
    await using link = await startTestLink({
      server: {
        models: {
          defaultModel: 'fake/m',
          custom: { fake: { ...custom, models: ['m', 'big'] } },
          env: { ANTHROPIC_API_KEY: 'sk-test' },
        },
      },
    });
    await using client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN });
    const { workerId } = link.worker;
    await client.rpc.sessions.create.mutate({ workerId, model: 'openai/gpt-4.1' });
    await client.rpc.sessions.create.mutate({ workerId, model: 'anthropic/claude-sonnet-4-5' });
    const list = await client.rpc.models.list.query();
    expect(list.defaultModel).toBe('fake/m');
    expect(list.models).toEqual([
      { id: 'fake/m', provider: 'fake', source: 'default' },
      { id: 'fake/big', provider: 'fake', source: 'custom' },
      // openai has no key on this server: its session's model is not offered.
      { id: 'anthropic/claude-sonnet-4-5', provider: 'anthropic', source: 'recent' },
    ]);
    expect(list.providers.find((provider) => provider.name === 'fake')).toEqual({
      name: 'fake',
      builtin: false,
      configured: true,
    });
  });
});
