import { isMolfError, type ModelCheck } from '@molf/protocol';
import { KEY_VARIABLES, type ModelResolver } from './resolve-model.ts';

/**
 * Whether a prompt with `prompt`'s model (else the session's, else the default) would reach its
 * provider: the resolver is asked exactly as a turn asks it, so the answer and the error a turn
 * would end with are one and the same. Nothing goes over the network.
 */
export function checkModel(options: {
  resolver: ModelResolver;
  prompt?: string | undefined;
  session?: string | undefined;
  defaultModel?: string | undefined;
}): ModelCheck {
  const model = options.prompt ?? options.session ?? options.defaultModel;
  try {
    options.resolver.resolve({ prompt: options.prompt, session: options.session });
    return { ...(model === undefined ? {} : { model }), ready: true };
  } catch (error) {
    if (!isMolfError(error) || (error.code !== 'model_not_configured' && error.code !== 'model_not_found')) throw error;
    const provider = model?.slice(0, model.indexOf('/'));
    const missing =
      error.code === 'model_not_configured' && provider !== undefined && Object.hasOwn(KEY_VARIABLES, provider)
        ? KEY_VARIABLES[provider as keyof typeof KEY_VARIABLES]
        : undefined;
    return {
      ...(model === undefined ? {} : { model }),
      ready: false,
      problem: { code: error.code, message: error.message, ...(missing === undefined ? {} : { missing }) },
    };
  }
}
