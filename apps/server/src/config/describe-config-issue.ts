import { locateJsoncValue } from '@molf/permissions';
import type { z } from 'zod';

/**
 * One problem a schema found in a JSONC config file, as people read it: the file, the setting (as
 * a dotted path), what is wrong, and where it is (`(line 3, column 15)`, the value's start; a
 * setting that is not allowed is pointed at by its name). `unknownSetting` may say why a name
 * (its whole path) is not allowed; undefined, or by default, the schema's own message stands.
 */
export function describeConfigIssue(options: {
  file: string;
  text: string;
  issue: z.core.$ZodIssue | undefined;
  unknownSetting?: (path: readonly PropertyKey[]) => string | undefined;
}): string {
  const { file, text, issue } = options;
  if (issue === undefined) return `${file}: invalid`;
  const unknown = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const keyPath = unknown === undefined ? issue.path : [...issue.path, unknown];
  const instead = unknown === undefined ? undefined : options.unknownSetting?.(keyPath);
  const shown = (instead === undefined ? issue.path : keyPath).map(String);
  const message =
    instead ??
    // A refused record key (a provider's or a price's name) has its reason one level down.
    (issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message);
  const at = locateJsoncValue(text, keyPath as Array<string | number>, { key: unknown !== undefined });
  const where = at === undefined ? '' : ` (line ${at.line}, column ${at.column})`;
  return `${file}: ${shown.length === 0 ? 'the file' : `"${shown.join('.')}"`}: ${message}${where}`;
}
