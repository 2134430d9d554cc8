/**
 * Variables never passed to commands the model runs: every MOLF_* variable, well-known provider
 * and service credentials, and any name that says it holds a secret (…TOKEN, …SECRET, …PASSWORD,
 * …API_KEY, …ACCESS_KEY, …PRIVATE_KEY, …CREDENTIALS). A deny-list, so ordinary tooling
 * (PATH, HOME, LANG, proxies, SSH_AUTH_SOCK, toolchain variables) keeps working.
 */
const SECRET_NAME = /^MOLF_|(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)($|_)/i;

const KNOWN_SECRETS = new Set([
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'GOOGLE_GENERATIVE_AI_API_KEY',
  'GEMINI_API_KEY',
  'OPENROUTER_API_KEY',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AZURE_OPENAI_API_KEY',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'NPM_TOKEN',
  'HF_TOKEN',
]);

export function isSecretVariable(name: string): boolean {
  return KNOWN_SECRETS.has(name.toUpperCase()) || SECRET_NAME.test(name);
}

/** A copy of `env` without the variables above. */
export function scrubEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isSecretVariable(name)) kept[name] = value;
  }
  return kept;
}
