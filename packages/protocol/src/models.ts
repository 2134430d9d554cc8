import { z } from 'zod';
import { SessionIdSchema } from './approvals.ts';
import { ModelIdSchema } from './sessions.ts';

/**
 * Where a listed model comes from: the server's default, a custom provider's `models` in the server
 * config, or the model a recent session was set to.
 */
export const ModelSourceSchema = z.enum(['default', 'custom', 'recent']);
export type ModelSource = z.infer<typeof ModelSourceSchema>;

export const ModelInfoSchema = z.object({
  /** `provider/model`, as a prompt or a session names it. */
  id: ModelIdSchema,
  provider: z.string(),
  source: ModelSourceSchema,
});
export type ModelInfo = z.infer<typeof ModelInfoSchema>;

export const ProviderInfoSchema = z.object({
  /** What comes before the `/` of a model id. */
  name: z.string(),
  /** One of Molf's own providers (openai, anthropic, google, ollama), not one of the server config's. */
  builtin: z.boolean(),
  /** Whether the server has what the provider needs (a key, a host); a model of one that has not fails. */
  configured: z.boolean(),
  /** For one not configured: what to set. */
  hint: z.string().optional(),
  /** For a built-in provider without its key: the environment variable to set, e.g. `ANTHROPIC_API_KEY`. */
  missing: z.string().optional(),
});
export type ProviderInfo = z.infer<typeof ProviderInfoSchema>;

/**
 * `models.list`: the models a picker offers, from the server's configuration alone (no provider is
 * asked over the network). A person may still type any `provider/model`.
 */
export const ModelListSchema = z.object({
  /** The model of prompts and sessions that name none. */
  defaultModel: z.string().optional(),
  /** Each model once, under its first source in the order default, custom, recent. */
  models: z.array(ModelInfoSchema),
  /** Every provider a model id may name: the built-in ones and the server config's. */
  providers: z.array(ProviderInfoSchema),
});
export type ModelList = z.infer<typeof ModelListSchema>;

/** `models.check`: the model a prompt would use, by itself or in a session. */
export const ModelCheckInputSchema = z.object({
  /** The model the prompt would name. */
  model: ModelIdSchema.optional(),
  /** The session it would go to: its model counts when the prompt names none. */
  sessionId: SessionIdSchema.optional(),
});

/**
 * Whether a prompt would reach its model's provider, as far as the server's configuration tells
 * (no provider is asked over the network): the key is there, the provider exists.
 */
export const ModelCheckSchema = z.object({
  /** The model a prompt would use: the one given, else the session's, else the server default; absent when none. */
  model: z.string().optional(),
  ready: z.boolean(),
  /** Why a prompt would fail, in the words and with the code of the error it would end with. */
  problem: z
    .object({
      code: z.enum(['model_not_configured', 'model_not_found']),
      message: z.string(),
      /** The environment variable whose key is missing, e.g. `ANTHROPIC_API_KEY`. */
      missing: z.string().optional(),
    })
    .optional(),
});
export type ModelCheck = z.infer<typeof ModelCheckSchema>;
