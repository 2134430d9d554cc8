import type { Grant, PermissionsGrants } from '@molf/protocol';
import { formatTable } from './format-table.ts';

/** Longest pattern and call cell; `--json` has them whole. */
const MAX_CELL = 60;

function cut(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > MAX_CELL ? `${oneLine.slice(0, MAX_CELL - 1)}…` : oneLine;
}

/** `2026-11-24T18:00:00.000Z` → `2026-11-24 18:00Z`. */
function toMinute(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z`;
}

function expiresCell(grant: Grant): string {
  if (grant.expiresAt === undefined) return 'never';
  return grant.expired ? `expired ${toMinute(grant.expiresAt)}` : toMinute(grant.expiresAt);
}

/**
 * A worker's grants as a table: id, tool, pattern, expiry, when and by whom it was given, from which
 * client, and the call it was given for; `—` where the audit log has no record of it.
 */
export function formatGrants(listed: PermissionsGrants): string {
  if (listed.grants.length === 0) {
    return `no grants in ${listed.path} ("always" answers save them)\n`;
  }
  const rows = [
    ['GRANT', 'TOOL', 'PATTERN', 'EXPIRES', 'GIVEN', 'BY', 'CLIENT', 'FOR'],
    ...listed.grants.map((grant) => [
      grant.grantId,
      grant.tool,
      cut(grant.action === 'allow' ? grant.pattern : `${grant.pattern} (${grant.action})`),
      expiresCell(grant),
      grant.givenAt === undefined ? '—' : toMinute(grant.givenAt),
      grant.givenBy === undefined ? '—' : (grant.givenBy.label ?? grant.givenBy.credentialId),
      grant.client ?? '—',
      grant.subjects.length === 0 ? '—' : cut(grant.subjects.join('; ')),
    ]),
  ];
  return formatTable(rows);
}
