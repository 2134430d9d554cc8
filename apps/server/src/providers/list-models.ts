import { ModelIdSchema, type ModelInfo, type ModelList, type ProviderInfo } from '@molf/protocol';
import { BUILT_IN_PROVIDERS, builtinProviderKey, KEY_VARIABLES, type ProviderSettings } from './resolve-model.ts';

/** Recent sessions' models listed at most. */
export const MAX_RECENT_MODELS = 20;
/** How many of the newest sessions are looked at for their models. */
export const RECENT_SESSIONS_FOR_MODELS = 200;

function providerOf(id: string): string {
  return id.slice(0, id.indexOf('/'));
}

/** The providers a model id may name; a custom provider of a built-in's name replaces it (as when resolving). */
function toProviders(settings: ProviderSettings, env: NodeJS.ProcessEnv): ProviderInfo[] {
  const custom = settings.custom ?? {};
  const builtin = BUILT_IN_PROVIDERS.filter((name) => custom[name] === undefined).map((name): ProviderInfo => {
    if (name === 'ollama') {
      const configured = (settings.ollamaHost ?? env.OLLAMA_HOST ?? '') !== '';
      return {
        name,
        builtin: true,
        configured,
        ...(configured ? {} : { hint: 'set OLLAMA_HOST or "ollamaHost" (otherwise http://127.0.0.1:11434 is tried)' }),
      };
    }
    const configured = builtinProviderKey(name, settings, env) !== undefined;
    return {
      name,
      builtin: true,
      configured,
      ...(configured
        ? {}
        : {
            hint: `set ${KEY_VARIABLES[name]} in the server's environment (or "keys.${name}")`,
            missing: KEY_VARIABLES[name],
          }),
    };
  });
  return [...builtin, ...Object.keys(custom).map((name): ProviderInfo => ({ name, builtin: false, configured: true }))];
}

/**
 * The models a picker offers, from the configuration alone (no network): the default model, each
 * custom provider's `models`, then the models recent sessions were set to, of configured providers
 * only. Each id once; names that do not form a model id (a space in a configured name) are left out.
 */
export function listModels(options: {
  settings: ProviderSettings;
  /** Models of recent sessions, newest first. Default none. */
  recent?: readonly string[];
}): ModelList {
  const { settings } = options;
  const env = settings.env ?? process.env;
  const providers = toProviders(settings, env);
  const configured = new Set(providers.filter((provider) => provider.configured).map((provider) => provider.name));
  const models: ModelInfo[] = [];
  const seen = new Set<string>();
  const add = (id: string, source: ModelInfo['source']): boolean => {
    if (seen.has(id) || !ModelIdSchema.safeParse(id).success) return false;
    seen.add(id);
    models.push({ id, provider: providerOf(id), source });
    return true;
  };
  if (settings.defaultModel !== undefined) add(settings.defaultModel, 'default');
  for (const [provider, custom] of Object.entries(settings.custom ?? {})) {
    for (const name of custom.models ?? []) add(`${provider}/${name}`, 'custom');
  }
  let recent = 0;
  for (const id of options.recent ?? []) {
    if (recent >= MAX_RECENT_MODELS) break;
    if (configured.has(providerOf(id)) && add(id, 'recent')) recent += 1;
  }
  return {
    ...(settings.defaultModel === undefined ? {} : { defaultModel: settings.defaultModel }),
    models,
    providers,
  };
}
