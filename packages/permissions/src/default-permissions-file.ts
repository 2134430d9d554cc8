import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The commented default `permissions.jsonc` every worker starts with (kept in `config/`). */
export const DEFAULT_PERMISSIONS_PATH = fileURLToPath(
  new URL('../../../config/permissions.default.jsonc', import.meta.url),
);

let cached: string | undefined;

export function readDefaultPermissionsText(): string {
  cached ??= readFileSync(DEFAULT_PERMISSIONS_PATH, 'utf8');
  return cached;
}
