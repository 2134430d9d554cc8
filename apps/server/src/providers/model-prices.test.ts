import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadServerConfigFile, toModelSettings } from '../config/load-server-config.ts';
import { createTempDir } from '../testing/test-link.ts';
import { findModelPrice } from './model-prices.ts';
import { createModelResolver } from './resolve-model.ts';

const a = { input: 1, output: 2 };
const b = { input: 3, output: 4 };
const c = { input: 5, output: 6 };
const d = { input: 7, output: 8 };

describe('model prices', () => {
  it('finds a model’s price: its id, its custom provider’s entry, the provider’s "*" (config first)', () => {
    const settings = {
      prices: { 'router/x': a, 'router/*': c, 'openai/gpt-4.1': a },
      custom: { router: { prices: { x: b, y: b, '*': d } }, lab: { prices: { '*': d } } },
    };
    expect(findModelPrice(settings, 'router/x')).toBe(a);
    expect(findModelPrice(settings, 'router/y')).toBe(b);
    expect(findModelPrice(settings, 'router/z')).toBe(c);
    expect(findModelPrice(settings, 'lab/anything')).toBe(d);
    expect(findModelPrice(settings, 'openai/gpt-4.1')).toBe(a);
    expect(findModelPrice(settings, 'openai/gpt-4.1-mini')).toBeUndefined();
    expect(findModelPrice(settings, 'router/constructor')).toBe(c);
    expect(findModelPrice({}, 'openai/constructor')).toBeUndefined();
  });

  it('gives a resolved model its price', () => {
    const resolver = createModelResolver({
      custom: { lab: { baseURL: 'http://127.0.0.1:1/v1', prices: { small: a } } },
      env: {},
    });
    expect(resolver.resolve({ prompt: 'lab/small' }).price).toEqual(a);
    expect(resolver.resolve({ prompt: 'lab/large' }).price).toBeUndefined();
  });

  it('reads prices from the server config, at the top level and per custom provider', async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'config.jsonc');
    await writeFile(
      path,
      `{
        "prices": { "anthropic/claude-sonnet-4": { "input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75 },
                    "ollama/*": { "input": 0, "output": 0 } },
        "providers": { "lab": { "baseURL": "http://127.0.0.1:8080/v1", "prices": { "qwen3": { "input": 0.2, "output": 0.6 } } } }
      }`,
    );
    const { models } = toModelSettings(await loadServerConfigFile(path), {});
    expect(findModelPrice(models, 'anthropic/claude-sonnet-4')).toEqual({
      input: 3,
      output: 15,
      cacheRead: 0.3,
      cacheWrite: 3.75,
    });
    expect(findModelPrice(models, 'ollama/llama3')).toEqual({ input: 0, output: 0 });
    expect(findModelPrice(models, 'lab/qwen3')).toEqual({ input: 0.2, output: 0.6 });
  });

  it('refuses a price that is not one, naming the entry', async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'config.jsonc');
    const cases: Array<[string, RegExp]> = [
      [
        '{ "prices": { "gpt-4.1": { "input": 1, "output": 2 } } }',
        /"prices\.gpt-4\.1": price a model as "provider\/model"/,
      ],
      ['{ "prices": { "openai/gpt-4.1": { "input": -1, "output": 2 } } }', /"prices\.openai\/gpt-4\.1\.input"/],
      ['{ "prices": { "openai/gpt-4.1": { "input": 1 } } }', /"prices\.openai\/gpt-4\.1\.output"/],
      ['{ "prices": { "openai/gpt-4.1": { "input": 1, "output": 2, "cached": 1 } } }', /"prices\.openai\/gpt-4\.1"/],
      [
        '{ "providers": { "lab": { "baseURL": "http://127.0.0.1:1/v1", "prices": { "m": { "input": "0.2", "output": 1 } } } } }',
        /"providers\.lab\.prices\.m\.input"/,
      ],
    ];
    for (const [text, message] of cases) {
      await writeFile(path, text);
      await expect(loadServerConfigFile(path), text).rejects.toMatchObject({
        code: 'config_invalid',
        message: expect.stringMatching(message),
      });
    }
  });
});
