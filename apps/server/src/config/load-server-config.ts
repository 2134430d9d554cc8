import { readFile } from 'node:fs/promises';
import { safeParseJsonc } from '@molf/permissions';
import { MolfError } from '@molf/protocol';
import { z } from 'zod';
import type { AgentSettings } from '../agent/index.ts';
import { NotifySettingsSchema } from '../notify/notify-settings.ts';
import { ModelPricesSchema } from '../providers/model-prices.ts';
import { AttachmentViewSchema, CustomProviderSchema, type ProviderSettings } from '../providers/resolve-model.ts';
import { safeParseOrigin } from '../transport/origin-policy.ts';
import { describeConfigIssue } from './describe-config-issue.ts';

/** The server's JSONC config file (`--config`, default `{dataDir}/config.jsonc` when it exists). */
export const ServerConfigFileSchema = z.strictObject({
  /** Default model, `provider/model`. */
  model: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+\/\S+$/, 'use provider/model, e.g. openai/gpt-4.1')
    .optional(),
  /**
   * Model that titles new sessions from their first prompt, in the background, `provider/model`.
   * Default none: a session is named by its first prompt's first words.
   */
  titleModel: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+\/\S+$/, 'use provider/model, e.g. openai/gpt-4.1-mini')
    .optional(),
  /** API keys of the built-in providers (default: OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY). */
  keys: z.strictObject({ openai: z.string(), anthropic: z.string(), google: z.string() }).partial().optional(),
  /** Custom OpenAI-compatible providers: `"name": { "baseURL": …, "apiKey"?, "headers"?, "models"? }`. */
  providers: z
    .record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a provider name is letters, digits, _ . -'), CustomProviderSchema)
    .optional(),
  /**
   * Origins of web pages that may connect (the WebSocket `Origin` check), `http(s)://host[:port]`.
   * Default none: only the server's own origin, and clients that send no origin (CLI, workers).
   */
  allowedOrigins: z
    .array(
      z.string().transform((text, context) => {
        const parsed = safeParseOrigin(text);
        if (parsed.ok) return parsed.value;
        context.addIssue({ code: 'custom', message: parsed.error });
        return z.NEVER;
      }),
    )
    .optional(),
  /**
   * Model prices in USD per million tokens, for the cost of each call: `"provider/model"` (or
   * `"provider/*"`) → `{ "input", "output", "cacheRead"?, "cacheWrite"? }`. Default none: a cost is
   * then known only where the provider reports it (OpenRouter).
   */
  prices: ModelPricesSchema.optional(),
  /** Where Ollama listens (default $OLLAMA_HOST or http://127.0.0.1:11434). */
  ollamaHost: z.string().optional(),
  /**
   * What models can see of tool attachments, by provider or model id: `"ollama/llava": "images"`.
   * Defaults: OpenAI, Anthropic, Google images and PDF; Ollama none; custom providers images.
   */
  attachments: z.record(z.string().min(1), AttachmentViewSchema).optional(),
  agent: z
    .strictObject({
      maxSteps: z.number().int().min(1).max(200),
      maxQueue: z.number().int().min(0).max(1_000),
      turnTimeoutMs: z.number().int().min(1_000),
      contextTokens: z.number().int().min(1_000),
      streamIdleTimeoutMs: z.number().int().min(1_000),
      maxParallelTasks: z.number().int().min(1).max(64),
      taskTimeoutMs: z.number().int().min(1_000),
    })
    .partial()
    .optional(),
  /**
   * Approval requests sent to webhooks and ntfy topics with one-time approve/deny links:
   * `{ "publicUrl"?, "linkTtlMinutes"?, "targets": [{ "type": "webhook" | "ntfy", "url", … }] }`. Default none.
   */
  notify: NotifySettingsSchema.optional(),
  /**
   * Scheduled prompts: the shortest interval a job may have (seconds, default 60) and the zone of
   * cron expressions written without one (default: the server's).
   */
  cron: z
    .strictObject({
      minIntervalSeconds: z.number().int().min(1).max(86_400),
      timezone: z.string().min(1).max(64).refine(isTimeZone, 'not an IANA time zone, e.g. Europe/Berlin'),
    })
    .partial()
    .optional(),
});

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The cron settings of a config file, as the server takes them. */
export function toCronSettings(file: ServerConfigFile): { minIntervalMs?: number; timezone?: string } {
  return {
    ...(file.cron?.minIntervalSeconds === undefined ? {} : { minIntervalMs: file.cron.minIntervalSeconds * 1_000 }),
    ...(file.cron?.timezone === undefined ? {} : { timezone: file.cron.timezone }),
  };
}
export type ServerConfigFile = z.infer<typeof ServerConfigFileSchema>;

/** Reads and validates a server config file; every problem names the file and where. */
export async function loadServerConfigFile(
  path: string,
  options: { optional?: boolean } = {},
): Promise<ServerConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (options.optional === true && (error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new MolfError('config_invalid', `cannot read the config file ${path}: ${(error as Error).message}`);
  }
  const read = safeParseJsonc(text);
  if (!read.ok) {
    const { line, column, message } = read.error;
    throw new MolfError('config_invalid', `${path}: line ${line}, column ${column}: ${message}`);
  }
  const value = read.value;
  const parsed = ServerConfigFileSchema.safeParse(value ?? {});
  if (!parsed.success) {
    throw new MolfError('config_invalid', describeConfigIssue({ file: path, text, issue: parsed.error.issues[0] }));
  }
  return parsed.data;
}

/** Provider and agent settings from the file, the flags and the environment (flag > env > file). */
export function toModelSettings(
  file: ServerConfigFile,
  overrides: { model?: string | undefined },
): { models: ProviderSettings; agent: AgentSettings } {
  return {
    models: {
      defaultModel: overrides.model ?? file.model,
      ...(file.titleModel === undefined ? {} : { titleModel: file.titleModel }),
      ...(file.keys === undefined ? {} : { keys: file.keys }),
      ...(file.providers === undefined ? {} : { custom: file.providers }),
      ...(file.ollamaHost === undefined ? {} : { ollamaHost: file.ollamaHost }),
      ...(file.attachments === undefined ? {} : { attachments: file.attachments }),
      ...(file.prices === undefined ? {} : { prices: file.prices }),
    },
    agent: file.agent ?? {},
  };
}
