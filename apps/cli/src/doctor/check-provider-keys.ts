import { BUILT_IN_PROVIDERS, builtinProviderKey, KEY_VARIABLES, type ProviderSettings } from '@molf/server';
import type { DoctorCheck } from './doctor-check.ts';

type KeyedProvider = keyof typeof KEY_VARIABLES;

function isKeyed(provider: string): provider is KeyedProvider {
  return Object.hasOwn(KEY_VARIABLES, provider);
}

/** Where a keyed provider's key comes from, named (never the key). */
function keySource(provider: KeyedProvider, settings: ProviderSettings, env: NodeJS.ProcessEnv): string {
  if ((settings.keys?.[provider] ?? '') !== '') return `"keys.${provider}" in the config file`;
  if ((env[KEY_VARIABLES[provider]] ?? '') !== '') return KEY_VARIABLES[provider];
  return 'GEMINI_API_KEY';
}

function originOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : url;
}

/**
 * The model providers the server config names, each with its key present or not (never the key):
 * the default model's provider, every custom provider and every built-in one with a key. Only a
 * provider that is used and lacks its key is an error; no default model is a warning (each prompt
 * must then name one). Keys are read from this shell's environment, as `molf up` and `molf server`
 * started here would read them.
 */
export function checkProviderKeys(options: {
  settings: ProviderSettings;
  /** The config file the settings came from, for the fixes. */
  configFile: string;
  env: NodeJS.ProcessEnv;
}): DoctorCheck[] {
  const { settings, configFile, env } = options;
  const custom = settings.custom ?? {};
  const model = settings.defaultModel;
  const modelProvider = model === undefined ? undefined : model.slice(0, Math.max(0, model.indexOf('/')));
  const checks: DoctorCheck[] = [];
  if (model === undefined) {
    checks.push({
      id: 'model',
      status: 'warning',
      summary: 'no default model: every prompt must name one',
      fix: `set "model": "provider/model" in ${configFile}, or MOLF_MODEL (e.g. anthropic/claude-sonnet-4-5)`,
    });
  } else if (
    modelProvider !== undefined &&
    custom[modelProvider] === undefined &&
    !(BUILT_IN_PROVIDERS as readonly string[]).includes(modelProvider)
  ) {
    checks.push({
      id: 'model',
      status: 'error',
      summary: `the default model ${model} names no known provider "${modelProvider}"`,
      fix: `use one of ${BUILT_IN_PROVIDERS.join(', ')}, or declare it in ${configFile}: "providers": { "${modelProvider}": { "baseURL": "…" } }`,
    });
  }
  const named = new Set<string>([
    ...(modelProvider === undefined || modelProvider === '' ? [] : [modelProvider]),
    ...Object.keys(custom),
    ...Object.keys(KEY_VARIABLES).filter(
      (name) => builtinProviderKey(name as KeyedProvider, settings, env) !== undefined,
    ),
  ]);
  for (const name of named) {
    const used = name === modelProvider ? ` (default model ${model})` : '';
    const declared = custom[name];
    if (declared !== undefined) {
      checks.push({
        id: `provider:${name}`,
        status: 'ok',
        summary: `provider ${name}${used}: ${originOf(declared.baseURL)}, ${declared.apiKey === undefined ? 'no API key (none needed for a local endpoint)' : 'API key set'}`,
      });
    } else if (isKeyed(name)) {
      checks.push(
        builtinProviderKey(name, settings, env) === undefined
          ? {
              id: `provider:${name}`,
              status: 'error',
              summary: `provider ${name}${used}: no API key`,
              fix: `export ${KEY_VARIABLES[name]}=… where the server runs, or set "keys": { "${name}": "…" } in ${configFile}`,
            }
          : {
              id: `provider:${name}`,
              status: 'ok',
              summary: `provider ${name}${used}: key set (${keySource(name, settings, env)})`,
            },
      );
    } else if (name === 'ollama') {
      const host = settings.ollamaHost ?? env.OLLAMA_HOST ?? 'http://127.0.0.1:11434';
      checks.push({ id: 'provider:ollama', status: 'ok', summary: `provider ollama${used}: ${host} (no key needed)` });
    }
  }
  return checks;
}
