import { z } from 'zod';

const UsdPerMillionSchema = z.number().nonnegative().finite();

/**
 * A model's price in US dollars per million tokens, as the provider lists it: `input` and `output`;
 * `cacheRead` and `cacheWrite` for prompt-cache tokens (each default `input`).
 */
export const ModelPriceSchema = z.strictObject({
  input: UsdPerMillionSchema,
  output: UsdPerMillionSchema,
  cacheRead: UsdPerMillionSchema.optional(),
  cacheWrite: UsdPerMillionSchema.optional(),
});
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** Prices by `provider/model` id, or `provider/*` for every model of a provider (`"ollama/*"`). */
export const ModelPricesSchema = z.record(
  z
    .string()
    .regex(/^[A-Za-z0-9_.-]+\/\S+$/, 'price a model as "provider/model", or every model of one as "provider/*"'),
  ModelPriceSchema,
);
export type ModelPrices = z.infer<typeof ModelPricesSchema>;

/**
 * A model's price: the server config's `prices` for its id, else its custom provider's `prices` for
 * its name, else `prices["provider/*"]`, else the custom provider's `prices["*"]`. Undefined when
 * none is given: the cost is then unknown, never taken as free.
 */
export function findModelPrice(
  settings: {
    prices?: ModelPrices | undefined;
    custom?: Record<string, { prices?: Record<string, ModelPrice> | undefined }> | undefined;
  },
  modelId: string,
): ModelPrice | undefined {
  const slash = modelId.indexOf('/');
  if (slash <= 0) return undefined;
  const provider = modelId.slice(0, slash);
  const name = modelId.slice(slash + 1);
  const custom =
    settings.custom !== undefined && Object.hasOwn(settings.custom, provider) ? settings.custom[provider] : undefined;
  return (
    ownEntry(settings.prices, modelId) ??
    ownEntry(custom?.prices, name) ??
    ownEntry(settings.prices, `${provider}/*`) ??
    ownEntry(custom?.prices, '*')
  );
}

/** A record's own entry: a model named `constructor` is not priced by `Object.prototype`. */
function ownEntry<T>(record: Record<string, T> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}
