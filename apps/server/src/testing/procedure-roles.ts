import type { CallerNeeded } from '../rpc/trpc.ts';

/**
 * Who may call each procedure of the app router: the specification the role test checks against a
 * real server, and the table the README shows (rendered by {@link renderRolesTable}). A procedure
 * added to the router without a row here fails that test.
 */
export const PROCEDURE_ROLES: Readonly<Record<string, CallerNeeded>> = {
  'auth.whoami': 'any',

  'sessions.list': 'viewer',
  'sessions.info': 'viewer',
  'sessions.get': 'viewer',
  'sessions.toolOutput': 'viewer',
  'sessions.attachment': 'viewer',
  'sessions.events': 'viewer',
  'sessions.create': 'operator',
  'sessions.prompt': 'operator',
  'sessions.abort': 'operator',
  'sessions.rename': 'operator',
  'sessions.delete': 'operator',

  'approvals.list': 'viewer',
  'approvals.events': 'viewer',
  'approvals.approve': 'operator',
  'approvals.deny': 'operator',

  'workers.list': 'viewer',
  'workers.events': 'viewer',

  'models.list': 'viewer',
  'models.check': 'operator',

  'cron.list': 'viewer',
  'cron.events': 'viewer',
  'cron.add': 'operator',
  'cron.update': 'operator',
  'cron.remove': 'operator',
  'cron.run': 'operator',
  'cron.heartbeat': 'operator',

  'permissions.show': 'operator',
  'permissions.explain': 'operator',
  'permissions.grants': 'operator',
  'permissions.write': 'admin',
  'permissions.revoke': 'admin',

  'tokens.list': 'admin',
  'tokens.create': 'admin',
  'tokens.revoke': 'admin',

  'pairing.list': 'admin',
  'pairing.create': 'admin',
  'pairing.cancel': 'admin',

  'worker.jobs': 'worker',
  'worker.tools': 'worker',
  'worker.catalog': 'worker',
  'worker.mcpServers': 'worker',
  'worker.mcpServerApproval': 'worker',
  'worker.mcpServerApprovalWithdraw': 'worker',
  'worker.result': 'worker',
  'worker.respond': 'worker',
};

/** The role an "always" answer needs (`approvals.approve` checks it inside, as it saves a rule). */
export const ALWAYS_ANSWER_NEEDS = 'admin';

const CLIENT_ROLES = ['viewer', 'operator', 'admin'] as const;
const LEVEL = { viewer: 0, operator: 1, admin: 2 } as const;

function mark(needed: CallerNeeded, role: (typeof CLIENT_ROLES)[number]): string {
  if (needed === 'any') return '✓';
  if (needed === 'worker') return '—';
  return LEVEL[role] >= LEVEL[needed] ? '✓' : '—';
}

/**
 * The README's roles table (what goes between `<!-- roles:start -->` and `<!-- roles:end -->`):
 * one row per client procedure, grouped by router in the order of `roles`, then a note on the
 * worker procedures and `auth.whoami`.
 */
export function renderRolesTable(roles: Readonly<Record<string, CallerNeeded>> = PROCEDURE_ROLES): string {
  const lines = ['| Router | Procedure | viewer | operator | admin |', '| --- | --- | :-: | :-: | :-: |'];
  let router: string | undefined;
  for (const [path, needed] of Object.entries(roles)) {
    if (needed === 'worker' || needed === 'any') continue;
    const [group = path, name = path] = path.split('.');
    const cells = CLIENT_ROLES.map((role) => mark(needed, role));
    lines.push(`| ${group === router ? '' : `**${group}**`} | \`${name}\` | ${cells.join(' | ')} |`);
    router = group;
    if (path === 'approvals.approve') {
      const always = CLIENT_ROLES.map((role) => mark(ALWAYS_ANSWER_NEEDS, role));
      lines.push(`|  | \`approve\` with scope \`always\` | ${always.join(' | ')} |`);
    }
  }
  const workerProcedures = Object.keys(roles)
    .filter((path) => roles[path] === 'worker')
    .map((path) => `\`${path}\``);
  const open = Object.keys(roles)
    .filter((path) => roles[path] === 'any')
    .map((path) => `\`${path}\``);
  return [
    ...lines,
    '',
    `Worker procedures (${workerProcedures.join(', ')}) are for worker credentials only, and a worker ` +
      `credential can call no client procedure. ${open.join(', ')} is open to every credential.`,
  ].join('\n');
}
