import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogle } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { MolfError } from '@molf/protocol';
import type { LanguageModel } from 'ai';
import { z } from 'zod';
import { findModelPrice, type ModelPrice, ModelPriceSchema, type ModelPrices } from './model-prices.ts';

/** What models can see of a tool result's attachments: nothing, images, or images and PDF documents. */
export const AttachmentViewSchema = z.enum(['none', 'images', 'images-and-pdf']);
export type AttachmentView = z.infer<typeof AttachmentViewSchema>;

/** An OpenAI-compatible endpoint declared in the server config (llama.cpp, vLLM, LM Studio, OpenRouter…). */
export const CustomProviderSchema = z.object({
  /** What its models can see of attachments (read_file of an image, MCP images). Default `images`. */
  attachments: AttachmentViewSchema.optional(),
  baseURL: z.url(),
  apiKey: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Model names offered (informational; any name is passed through). */
  models: z.array(z.string()).optional(),
  /**
   * Its models' prices in USD per million tokens, by model name (`"*"`: every model of it). Default
   * none: costs are unknown unless the endpoint reports them (OpenRouter does) or `prices` gives them.
   */
  prices: z.record(z.string().min(1), ModelPriceSchema).optional(),
});
export type CustomProvider = z.infer<typeof CustomProviderSchema>;

export type ProviderSettings = {
  /** `provider/model` used when neither the prompt nor the session names one. */
  defaultModel?: string | undefined;
  /**
   * `provider/model` that titles new sessions from their first prompt, in the background (a small,
   * cheap model fits). Default none: the prompt's first words are the title.
   */
  titleModel?: string | undefined;
  /** Keys for the built-in providers; default: the usual environment variables. */
  keys?: { openai?: string; anthropic?: string; google?: string };
  /** Custom OpenAI-compatible providers by name. */
  custom?: Record<string, CustomProvider>;
  /** Where `ollama/…` models are served. Default `$OLLAMA_HOST` or `http://127.0.0.1:11434`. */
  ollamaHost?: string;
  /**
   * What models can see of attachments, by provider (`ollama`) or model id (`ollama/llava`), the
   * model id first. Defaults: OpenAI, Anthropic and Google models images and PDF; Ollama models
   * none (most local models read text only); custom providers their `attachments`, else images.
   */
  attachments?: Record<string, AttachmentView>;
  /**
   * Prices in USD per million tokens by `provider/model` (or `provider/*`), for the cost of each
   * call; they come before a custom provider's own `prices`. Default none (costs unknown).
   */
  prices?: ModelPrices;
  /** The environment keys are read from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
};

/** How a model is shown a tool result's images and documents. */
export type AttachmentSupport = {
  images: boolean;
  pdf: boolean;
  /** The provider takes them inside the tool result; otherwise they follow in a user message. */
  inToolResults: boolean;
};

export type ResolvedModel = {
  id: string;
  model: LanguageModel;
  attachments: AttachmentSupport;
  /** Its price from the config (see `findModelPrice`); undefined when none is given. */
  price: ModelPrice | undefined;
};

export type ModelResolver = {
  /** The model for a prompt: prompt's, else session's, else the server default. */
  resolve(options: { prompt?: string | undefined; session?: string | undefined }): ResolvedModel;
  /**
   * What must never be shown of the settings a request to `modelId`'s provider carries (its key,
   * a custom provider's header values), for redacting its errors. Empty for an unknown provider.
   */
  secrets(modelId: string): string[];
};

function toSupport(view: AttachmentView, inToolResults: boolean): AttachmentSupport {
  return { images: view !== 'none', pdf: view === 'images-and-pdf', inToolResults };
}

export const BUILT_IN_PROVIDERS = ['openai', 'anthropic', 'google', 'ollama'] as const;

/** The environment variable that gives each keyed built-in provider its key (when the config has none). */
export const KEY_VARIABLES = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  google: 'GOOGLE_GENERATIVE_AI_API_KEY',
} as const;

/** A keyed built-in provider's key: the config's, else its environment variable's (Google: also GEMINI_API_KEY). */
export function builtinProviderKey(
  provider: keyof typeof KEY_VARIABLES,
  settings: ProviderSettings,
  env: NodeJS.ProcessEnv,
): string | undefined {
  const key =
    settings.keys?.[provider] ??
    env[KEY_VARIABLES[provider]] ??
    (provider === 'google' ? env.GEMINI_API_KEY : undefined);
  return key === '' ? undefined : key;
}

function isText(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}

function requireKey(provider: string, key: string | undefined, variable: string): string {
  if (key === undefined || key === '') {
    throw new MolfError(
      'model_not_configured',
      `no API key for ${provider}: set ${variable} in the server's environment (or its config)`,
    );
  }
  return key;
}

/** Turns `provider/model` ids into AI SDK models: built-in providers, Ollama and custom endpoints. */
export function createModelResolver(settings: ProviderSettings = {}): ModelResolver {
  const env = settings.env ?? process.env;
  const cache = new Map<string, ResolvedModel>();

  function attachmentsOf(id: string, provider: string): AttachmentSupport {
    const configured = settings.attachments?.[id] ?? settings.attachments?.[provider];
    // Anthropic takes images and documents inside a tool result; the others get them in a user
    // message right after the results (chat-completions endpoints accept only text there).
    const inToolResults = provider === 'anthropic';
    if (configured !== undefined) return toSupport(configured, inToolResults);
    const custom = settings.custom?.[provider];
    if (custom !== undefined) return toSupport(custom.attachments ?? 'images', false);
    if (provider === 'ollama') return toSupport('none', false);
    return toSupport('images-and-pdf', inToolResults);
  }

  /** The key and header values a request of `provider` carries. */
  function secretsOf(provider: string): string[] {
    const custom = settings.custom?.[provider];
    if (custom !== undefined) return [custom.apiKey, ...Object.values(custom.headers ?? {})].filter(isText);
    if (provider === 'openai' || provider === 'anthropic' || provider === 'google') {
      return [builtinProviderKey(provider, settings, env)].filter(isText);
    }
    return [];
  }

  function build(id: string): LanguageModel {
    const slash = id.indexOf('/');
    const provider = id.slice(0, slash);
    const name = id.slice(slash + 1);
    if (slash <= 0 || name === '') {
      throw new MolfError('model_not_found', `"${id}" is not a model id: use provider/model, e.g. openai/gpt-4.1`);
    }
    const custom = settings.custom?.[provider];
    if (custom !== undefined) {
      return createOpenAICompatible({
        name: provider,
        baseURL: custom.baseURL,
        ...(custom.apiKey === undefined ? {} : { apiKey: custom.apiKey }),
        ...(custom.headers === undefined ? {} : { headers: custom.headers }),
        includeUsage: true,
      })(name);
    }
    switch (provider) {
      case 'openai':
        return createOpenAI({
          apiKey: requireKey('openai', builtinProviderKey('openai', settings, env), KEY_VARIABLES.openai),
        })(name);
      case 'anthropic':
        return createAnthropic({
          apiKey: requireKey('anthropic', builtinProviderKey('anthropic', settings, env), KEY_VARIABLES.anthropic),
        })(name);
      case 'google':
        return createGoogle({
          apiKey: requireKey('google', builtinProviderKey('google', settings, env), KEY_VARIABLES.google),
        })(name);
      case 'ollama': {
        const host = (settings.ollamaHost ?? env.OLLAMA_HOST ?? 'http://127.0.0.1:11434').replace(/\/+$/, '');
        const base = /^https?:\/\//.test(host) ? host : `http://${host}`;
        return createOpenAICompatible({ name: 'ollama', baseURL: `${base}/v1`, includeUsage: true })(name);
      }
      default:
        throw new MolfError(
          'model_not_found',
          `unknown provider "${provider}" in "${id}": use one of ${[...BUILT_IN_PROVIDERS, ...Object.keys(settings.custom ?? {})].join(', ')}`,
        );
    }
  }

  return {
    secrets: (modelId) => secretsOf(modelId.slice(0, modelId.indexOf('/'))),
    resolve({ prompt, session }) {
      const id = prompt ?? session ?? settings.defaultModel;
      if (id === undefined) {
        throw new MolfError(
          'model_not_configured',
          'no model: pass one with the prompt, set one on the session, or start the server with --model provider/model (or MOLF_MODEL)',
        );
      }
      let resolved = cache.get(id);
      if (resolved === undefined) {
        resolved = {
          id,
          model: build(id),
          attachments: attachmentsOf(id, id.slice(0, id.indexOf('/'))),
          price: findModelPrice(settings, id),
        };
        cache.set(id, resolved);
      }
      return resolved;
    },
  };
}
