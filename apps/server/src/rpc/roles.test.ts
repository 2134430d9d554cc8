import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import { type Approval, EMPTY_PROJECT_CATALOG, type Role } from '@molf/protocol';
import { getUntypedClient, TRPCClientError } from '@trpc/client';
import type { AnyTRPCProcedure } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { createServerServices } from '../services/create-server-services.ts';
import { PROCEDURE_ROLES, renderRolesTable } from '../testing/procedure-roles.ts';
import { createTempDir, createTestRegistration, startTestLink, waitFor } from '../testing/test-link.ts';
import type { CallerNeeded } from './trpc.ts';

type Link = Awaited<ReturnType<typeof startTestLink>>;
type ProcedureType = 'query' | 'mutation' | 'subscription';

const ROLES: Role[] = ['viewer', 'operator', 'admin', 'worker'];
const LEVEL = { viewer: 0, operator: 1, admin: 2 } as const;

function isAllowed(role: Role, needed: CallerNeeded): boolean {
  if (needed === 'any') return true;
  if (needed === 'worker' || role === 'worker') return needed === role;
  return LEVEL[role] >= LEVEL[needed];
}

/**
 * Every procedure of the real app router with its type. `_def.procedures` is tRPC's flat map by
 * dotted path, the one its own resolver looks calls up in.
 */
async function appProcedures(): Promise<Map<string, ProcedureType>> {
  await using data = await createTempDir();
  const services = await createServerServices({ dataDir: data.path });
  try {
    const procedures = services.router._def.procedures as unknown as Record<string, AnyTRPCProcedure>;
    return new Map(Object.entries(procedures).map(([path, procedure]) => [path, procedure._def.type]));
  } finally {
    await services.close();
  }
}

type Outcome = { type: 'ok' } | { type: 'error'; code: string | undefined; message: string };

function toOutcome(error: unknown): Outcome {
  if (!(error instanceof TRPCClientError)) throw error;
  const data = error.data as { code?: string } | undefined;
  return { type: 'error', code: data?.code, message: error.message };
}

/**
 * Calls a procedure by path, as any client would; a subscription counts as answered at its first
 * event, its start or its error.
 */
async function callAs(client: MolfClient, path: string, type: ProcedureType, input: unknown): Promise<Outcome> {
  const untyped = getUntypedClient(client.rpc);
  if (type === 'subscription') {
    return new Promise<Outcome>((resolve) => {
      let answered = false;
      const answer = (outcome: Outcome) => {
        if (answered) return;
        answered = true;
        resolve(outcome);
        queueMicrotask(() => subscription.unsubscribe());
      };
      const subscription = untyped.subscription(path, input, {
        onStarted: () => answer({ type: 'ok' }),
        onData: () => answer({ type: 'ok' }),
        onError: (error) => answer(toOutcome(error)),
      });
    });
  }
  try {
    await (type === 'query' ? untyped.query(path, input) : untyped.mutation(path, input));
    return { type: 'ok' };
  } catch (error) {
    return toOutcome(error);
  }
}

/** The words a refusal uses for the role a call needs. */
function namesNeededRole(needed: CallerNeeded): RegExp {
  return needed === 'worker' ? /this call is for workers/ : new RegExp(`needs the ${needed}(,| or|) `);
}

async function connectAs(link: Link, role: Role): Promise<MolfClient> {
  const { token } = await link.server.credentials.create({ role, label: `test ${role}` });
  const client = createMolfClient({ url: link.server.url, token, client: `roles-test/${role}` });
  await client.ready();
  return client;
}

/** Starts a call that asks (a shell command the default rules ask about) and returns it with its approval. */
async function asked(link: Link, command: string) {
  const sessionId = randomUUID();
  const call = link.server.toolCalls.run({
    workerId: link.worker.workerId,
    sessionId,
    tool: 'shell_exec',
    args: { command },
    timeoutMs: 60_000,
  });
  let approval: Approval | undefined;
  await waitFor(
    () => {
      approval = link.server.gate.pending({ sessionId })[0];
      return approval !== undefined;
    },
    { what: `an approval for ${command}` },
  );
  return { call, approval: approval as Approval, sessionId };
}

describe('roles', () => {
  it('has a role for every procedure of the app router, and names none that does not exist', async () => {
    const procedures = await appProcedures();
    expect(
      [...procedures.keys()].filter((path) => !(path in PROCEDURE_ROLES)),
      'procedures without a role',
    ).toEqual([]);
    expect(
      Object.keys(PROCEDURE_ROLES).filter((path) => !procedures.has(path)),
      'roles of procedures that do not exist',
    ).toEqual([]);
  });

  it('lets each role call exactly the procedures its level allows, and refuses the others naming the role needed', async () => {
    const procedures = await appProcedures();
    await using link = await startTestLink();
    const clients = new Map<Role, MolfClient>();
    try {
      for (const role of ROLES) clients.set(role, await connectAs(link, role));
      const workerClient = clients.get('worker') as MolfClient;

      // A worker registered by the worker credential, so that its calls pass the ownership check;
      // its rules deny everything, so that asking to start an MCP server is answered at once.
      const registration = createTestRegistration();
      const rules = link.server.permissions.pathOf(registration.workerId);
      await mkdir(dirname(rules), { recursive: true });
      await writeFile(rules, '{ "*": "deny" }');
      const jobs = getUntypedClient(workerClient.rpc).subscription(
        'worker.jobs',
        { registration },
        { onError: () => {} },
      );
      await waitFor(() => link.server.registry.ownerOf(registration.workerId) !== undefined, {
        what: 'the raw worker to register',
      });

      const session = await link.server.sessions.create({ workerId: link.worker.workerId });
      const sessionId = session.sessionId;
      const workerId = link.worker.workerId;
      const unknownWorker = randomUUID();
      const unknownSession = 'no-such-session';
      const unknownJob = 'cj_00000000';
      const raw = { workerId: registration.workerId, instanceId: registration.instanceId };
      const mcpServer = { workerId: raw.workerId, name: 'files', definition: { command: 'true' } };

      // Inputs that pass validation, each on something that exists or harmlessly does not.
      const inputs: Record<string, unknown> = {
        'sessions.list': {},
        'sessions.info': { sessionId },
        'sessions.get': { sessionId },
        'sessions.toolOutput': { sessionId, toolCallId: 'call-1' },
        'sessions.attachment': { sessionId, sha256: '0'.repeat(64) },
        'sessions.events': { sessionId, fromNow: true },
        'sessions.create': { workerId: unknownWorker },
        'sessions.prompt': { sessionId: unknownSession, text: 'hello' },
        'sessions.abort': { sessionId: unknownSession },
        'sessions.rename': { sessionId, name: 'renamed' },
        'sessions.delete': { sessionId: unknownSession },
        'approvals.list': {},
        'approvals.events': {},
        'approvals.approve': { sessionId: unknownSession, approvalId: 'none', scope: 'once' },
        'approvals.deny': { sessionId: unknownSession, approvalId: 'none' },
        'workers.events': {},
        'models.check': {},
        'cron.list': {},
        'cron.events': {},
        'cron.add': { workerId: unknownWorker, schedule: { every: '1h' }, prompt: 'check' },
        'cron.update': { jobId: unknownJob, prompt: 'check again' },
        'cron.remove': { jobId: unknownJob },
        'cron.run': { jobId: unknownJob },
        'cron.heartbeat': { workerId: unknownWorker, enabled: false },
        'permissions.show': { workerId },
        'permissions.explain': { workerId, tool: 'shell_exec', args: { command: 'ls' } },
        'permissions.grants': { workerId },
        'permissions.write': { workerId: unknownWorker, text: '{}' },
        'permissions.revoke': { workerId, grantId: 'g_0000000000000000' },
        'tokens.create': { role: 'viewer', name: 'made by the role test' },
        'tokens.revoke': { id: 'nope' },
        'pairing.create': { role: 'viewer' },
        'pairing.cancel': { id: 'nope' },
        'worker.tools': { workerId: raw.workerId, tools: registration.tools },
        'worker.catalog': { ...raw, catalog: EMPTY_PROJECT_CATALOG },
        'worker.mcpServers': { ...raw, mcp: { version: 1, servers: [] } },
        'worker.mcpServerApproval': mcpServer,
        'worker.mcpServerApprovalWithdraw': mcpServer,
        'worker.result': { workerId: raw.workerId, toolCallId: 'call-1', result: { output: '' } },
        'worker.respond': { workerId: raw.workerId, requestId: 'request-1', response: { error: { message: 'no' } } },
      };

      const mismatches: string[] = [];
      for (const [path, type] of procedures) {
        const needed = PROCEDURE_ROLES[path] as CallerNeeded;
        for (const role of ROLES) {
          const input = path === 'worker.jobs' ? { registration: createTestRegistration() } : inputs[path];
          const outcome = await callAs(clients.get(role) as MolfClient, path, type, input);
          if (isAllowed(role, needed)) {
            // Reaching the handler is what counts: the inputs are valid, what they name may not exist.
            if (outcome.type === 'error' && (outcome.code === 'forbidden' || outcome.code === 'invalid_input')) {
              mismatches.push(`${path} as ${role}: ${outcome.code} (${outcome.message}), but ${needed} may call it`);
            }
          } else if (outcome.type === 'ok' || outcome.code !== 'forbidden') {
            mismatches.push(
              `${path} as ${role}: ${outcome.type === 'ok' ? 'answered' : outcome.code}, needs ${needed}`,
            );
          } else if (!namesNeededRole(needed).test(outcome.message)) {
            mismatches.push(`${path} as ${role}: the refusal "${outcome.message}" does not name ${needed}`);
          }
        }
      }
      jobs.unsubscribe();
      expect(mismatches).toEqual([]);
    } finally {
      for (const client of clients.values()) await client.close();
    }
  });

  it('refuses an operator\'s "always" answer, leaving the approval pending for a "once"; an admin\'s "always" saves the rule', async () => {
    await using link = await startTestLink();
    await using operator = await connectAs(link, 'operator');
    await using admin = await connectAs(link, 'admin');

    const first = await asked(link, 'echo from-operator');
    const answer = { sessionId: first.sessionId, approvalId: first.approval.approvalId };
    const refused = await operator.rpc.approvals.approve.mutate({ ...answer, scope: 'always' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(TRPCClientError);
    expect((refused as TRPCClientError<never>).data).toMatchObject({ code: 'forbidden', field: 'scope' });
    expect((refused as Error).message).toMatch(/needs the admin role; this credential is an operator/);
    expect(link.server.gate.pending({ sessionId: first.sessionId }).map((approval) => approval.approvalId)).toEqual([
      first.approval.approvalId,
    ]);
    expect(await operator.rpc.approvals.approve.mutate({ ...answer, scope: 'once' })).toEqual({ applied: true });
    expect((await first.call).output).toContain('from-operator');

    const second = await asked(link, 'echo from-admin');
    expect(
      await admin.rpc.approvals.approve.mutate({
        sessionId: second.sessionId,
        approvalId: second.approval.approvalId,
        scope: 'always',
      }),
    ).toEqual({ applied: true });
    expect((await second.call).output).toContain('from-admin');
    expect(await readFile(link.server.permissions.pathOf(link.worker.workerId), 'utf8')).toMatch(
      /"echo \*": \{ "action": "allow", "grant": "g_[0-9a-f]{16}" \}/,
    );
  });
});

describe('the README roles table', () => {
  it('is the table the role test checks, between its markers', async () => {
    const readme = await readFile(join(fileURLToPath(new URL('../../../..', import.meta.url)), 'README.md'), 'utf8');
    const start = '<!-- roles:start -->';
    const end = '<!-- roles:end -->';
    const from = readme.indexOf(start);
    const to = readme.indexOf(end, from + start.length);
    expect(from, 'README.md has the roles markers').toBeGreaterThanOrEqual(0);
    expect(to, 'README.md has the roles end marker after the start').toBeGreaterThan(from);
    const expected = renderRolesTable();
    const shown = readme.slice(from + start.length, to).trim();
    // The message holds the whole table to paste, should the README be behind.
    expect(shown, `README.md between ${start} and ${end} should read:\n\n${expected}\n`).toBe(expected);
  });
});
