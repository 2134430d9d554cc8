import { type CredentialInfo, kindOf, type PairingCodeInfo, type PairingCreateOutput, type Role } from '@molf/protocol';
import { formatTable } from '../commands/format-table.ts';
import { showOnOneLine } from '../terminal/show-on-one-line.ts';
import { formatWhen, toIsoSecond } from './format-when.ts';

/** What each role may do, in a few words, for help texts and refusals. */
export const ROLE_WORDS: Readonly<Record<Role, string>> = {
  worker: 'a worker: runs tools in one project directory',
  admin: 'everything: rules, credentials, pairing',
  operator: 'drive sessions and answer approvals',
  viewer: 'read sessions and approvals',
};

/** The roles as a list for a sentence: `worker (a worker: …), admin (everything…), …`. */
export function describeRoles(): string {
  return Object.entries(ROLE_WORDS)
    .map(([role, words]) => `${role} (${words})`)
    .join(', ');
}

/**
 * A name as a cell: on one line with its control and format characters shown (a name made now has
 * none, but an older file's, a hand-edited one's or another server's may), a wide one cut.
 */
function cell(text: string, width = 40): string {
  const symbols = [...showOnOneLine(text)];
  return symbols.length > width ? `${symbols.slice(0, width - 1).join('')}…` : symbols.join('');
}

/**
 * The credentials as a table: ID, ROLE, NAME, CREATED (ISO), LAST USED (relative and ISO), MADE
 * (created, paired, generated). The connection's own credential is marked `*` after its id.
 */
export function formatCredentialTable(credentials: readonly CredentialInfo[], now: number): string {
  if (credentials.length === 0) return 'no stored credentials\n';
  const table = formatTable([
    ['ID', 'ROLE', 'NAME', 'CREATED', 'LAST USED', 'MADE'],
    ...credentials.map((credential) => [
      `${credential.id}${credential.current ? ' *' : ''}`,
      credential.role,
      cell(credential.name),
      toIsoSecond(credential.createdAt),
      credential.lastUsedAt === undefined ? 'never seen' : formatWhen(credential.lastUsedAt, now),
      credential.origin,
    ]),
  ]);
  return credentials.some((credential) => credential.current) ? `${table}* the credential of this connection\n` : table;
}

/** The live pairing codes (never the codes): ID, ROLE, NAME, EXPIRES. */
export function formatPairingCodeTable(codes: readonly PairingCodeInfo[], now: number): string {
  if (codes.length === 0) return 'no live pairing codes\n';
  return formatTable([
    ['ID', 'ROLE', 'NAME', 'EXPIRES'],
    ...codes.map((code) => [
      code.id,
      code.role,
      cell(code.name ?? '(the redeemer names it)'),
      formatWhen(code.expiresAt, now),
    ]),
  ]);
}

/** Where peers reach the server, for the command to run there; a placeholder when not known. */
export type PeerUrl = { url: string; note?: string };

const PLACEHOLDER_URL = 'wss://SERVER:7600';

function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return host === 'localhost' || host === '[::1]' || host.startsWith('127.');
  } catch {
    return false;
  }
}

/**
 * The URL to show: `--url-for-peers`, else the URL this command reached the server by (when it
 * is not a loopback one, which another machine cannot use), else a placeholder, with a sentence
 * saying what to put there.
 */
export function toPeerUrl(options: { urlForPeers?: string | undefined; serverUrl?: string | undefined }): PeerUrl {
  if (options.urlForPeers !== undefined) return { url: options.urlForPeers };
  if (options.serverUrl !== undefined && !isLoopbackUrl(options.serverUrl)) return { url: options.serverUrl };
  const seen =
    options.serverUrl === undefined
      ? ''
      : ` (${options.serverUrl} is a loopback address, which another machine cannot reach)`;
  return {
    url: PLACEHOLDER_URL,
    note: `${PLACEHOLDER_URL} stands for this server's address as the other machine reaches it${seen}: put it there, or give --url-for-peers URL`,
  };
}

/**
 * What `molf pair` prints: the code, its expiry, how to cancel it (`target`: the flags that name where
 * it was made, as given), and the exact command for the other machine.
 */
export function formatPairingInstructions(made: PairingCreateOutput, peer: PeerUrl, now: number, target = ''): string {
  const worker = kindOf(made.role) === 'worker';
  const lines = [
    `pairing code ${worker ? 'for a worker' : `for a client with the ${made.role} role`}${made.name === undefined ? '' : ` named "${showOnOneLine(made.name)}"`}: ${made.code}`,
    `it works once and expires ${formatWhen(made.expiresAt, now)}; cancel it with: molf pair cancel ${made.id}${target}`,
    worker ? "on the worker's machine, run:" : 'on the other machine, run:',
    worker ? `  molf worker --server ${peer.url} --pair ${made.code}` : `  molf login ${peer.url} --pair ${made.code}`,
  ];
  if (peer.note !== undefined) lines.push(peer.note);
  return `${lines.join('\n')}\n`;
}
