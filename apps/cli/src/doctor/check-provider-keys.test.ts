import { describe, expect, it } from 'vitest';
import { checkProviderKeys } from './check-provider-keys.ts';

const CONFIG = '/home/me/.config/molf/config.jsonc';
const SECRET = 'sk-never-printed-7c1f';

describe('the provider key checks', () => {
  it("fails for the default model's provider without a key, naming the variable and the config field", () => {
    const checks = checkProviderKeys({ settings: { defaultModel: 'anthropic/claude-x' }, configFile: CONFIG, env: {} });
    expect(checks).toEqual([
      {
        id: 'provider:anthropic',
        status: 'error',
        summary: 'provider anthropic (default model anthropic/claude-x): no API key',
        fix: `export ANTHROPIC_API_KEY=… where the server runs, or set "keys": { "anthropic": "…" } in ${CONFIG}`,
      },
    ]);
  });

  it('says where a key comes from, never the key', () => {
    const fromEnv = checkProviderKeys({
      settings: { defaultModel: 'openai/gpt-4.1' },
      configFile: CONFIG,
      env: { OPENAI_API_KEY: SECRET },
    });
    expect(fromEnv).toEqual([
      {
        id: 'provider:openai',
        status: 'ok',
        summary: 'provider openai (default model openai/gpt-4.1): key set (OPENAI_API_KEY)',
      },
    ]);
    const fromFile = checkProviderKeys({
      settings: { defaultModel: 'google/gemini-x', keys: { google: SECRET } },
      configFile: CONFIG,
      env: {},
    });
    expect(fromFile[0]?.summary).toBe(
      'provider google (default model google/gemini-x): key set ("keys.google" in the config file)',
    );
    expect(JSON.stringify([fromEnv, fromFile])).not.toContain(SECRET);
  });

  it('lists custom providers and keyed providers that are set, and not the unused ones without a key', () => {
    const checks = checkProviderKeys({
      settings: {
        defaultModel: 'local/qwen',
        custom: {
          local: { baseURL: 'http://127.0.0.1:8080/v1' },
          router: { baseURL: 'https://openrouter.ai/api/v1', apiKey: SECRET },
        },
      },
      configFile: CONFIG,
      env: { ANTHROPIC_API_KEY: SECRET },
    });
    expect(checks.map((check) => [check.id, check.status, check.summary])).toEqual([
      [
        'provider:local',
        'ok',
        'provider local (default model local/qwen): http://127.0.0.1:8080, no API key (none needed for a local endpoint)',
      ],
      ['provider:router', 'ok', 'provider router: https://openrouter.ai, API key set'],
      ['provider:anthropic', 'ok', 'provider anthropic: key set (ANTHROPIC_API_KEY)'],
    ]);
  });

  it('warns without a default model and fails for a default model of no known provider', () => {
    expect(checkProviderKeys({ settings: {}, configFile: CONFIG, env: {} })).toEqual([
      expect.objectContaining({
        id: 'model',
        status: 'warning',
        fix: expect.stringContaining(`"model": "provider/model" in ${CONFIG}`),
      }),
    ]);
    expect(checkProviderKeys({ settings: { defaultModel: 'nope/model' }, configFile: CONFIG, env: {} })).toEqual([
      expect.objectContaining({
        id: 'model',
        status: 'error',
        summary: 'the default model nope/model names no known provider "nope"',
      }),
    ]);
  });
});
