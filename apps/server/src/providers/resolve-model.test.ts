import { describe, expect, it } from 'vitest';
import { createModelResolver } from './resolve-model.ts';

describe('model resolution', () => {
  it('takes the prompt model over the session model over the server default', () => {
    const resolver = createModelResolver({
      defaultModel: 'local/default',
      custom: { local: { baseURL: 'http://127.0.0.1:1/v1' } },
      env: {},
    });
    expect(resolver.resolve({}).id).toBe('local/default');
    expect(resolver.resolve({ session: 'local/session' }).id).toBe('local/session');
    expect(resolver.resolve({ prompt: 'local/prompt', session: 'local/session' }).id).toBe('local/prompt');
  });

  it('says what to set when there is no model at all', () => {
    expect(() => createModelResolver({ env: {} }).resolve({})).toThrow(
      expect.objectContaining({ code: 'model_not_configured', message: expect.stringContaining('MOLF_MODEL') }),
    );
  });

  it('names the missing key of a built-in provider, and takes it from the environment when set', () => {
    const resolver = createModelResolver({ env: {} });
    expect(() => resolver.resolve({ prompt: 'anthropic/claude-x' })).toThrow(
      expect.objectContaining({ code: 'model_not_configured', message: expect.stringContaining('ANTHROPIC_API_KEY') }),
    );
    expect(() => resolver.resolve({ prompt: 'openai/gpt-x' })).toThrow(
      expect.objectContaining({ message: expect.stringContaining('OPENAI_API_KEY') }),
    );
    expect(() => resolver.resolve({ prompt: 'google/gemini-x' })).toThrow(
      expect.objectContaining({ message: expect.stringContaining('GOOGLE_GENERATIVE_AI_API_KEY') }),
    );
    const withKey = createModelResolver({ env: { OPENAI_API_KEY: 'sk-test' } });
    expect(withKey.resolve({ prompt: 'openai/gpt-x' }).id).toBe('openai/gpt-x');
  });

  it('refuses an unknown provider and a malformed id, listing what exists', () => {
    const resolver = createModelResolver({ custom: { lab: { baseURL: 'http://127.0.0.1:1/v1' } }, env: {} });
    expect(() => resolver.resolve({ prompt: 'nope/model' })).toThrow(
      expect.objectContaining({
        code: 'model_not_found',
        message: expect.stringContaining('openai, anthropic, google, ollama, lab'),
      }),
    );
    expect(() => resolver.resolve({ prompt: 'no-slash' })).toThrow(
      expect.objectContaining({ code: 'model_not_found' }),
    );
  });

  it('serves ollama models without a key, from OLLAMA_HOST or the default address', () => {
    expect(createModelResolver({ env: {} }).resolve({ prompt: 'ollama/qwen3:8b' }).id).toBe('ollama/qwen3:8b');
    expect(createModelResolver({ env: { OLLAMA_HOST: 'gpu-box:11434' } }).resolve({ prompt: 'ollama/llama3' }).id).toBe(
      'ollama/llama3',
    );
  });
});
