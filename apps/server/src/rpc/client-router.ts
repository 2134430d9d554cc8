import {
  ApprovalAnswerSchema,
  ApprovalEventsInputSchema,
  ApproveInputSchema,
  CronAddInputSchema,
  CronHeartbeatInputSchema,
  CronJobIdInputSchema,
  CronJobSchema,
  CronListInputSchema,
  CronUpdateInputSchema,
  DamagedSessionSchema,
  DenyInputSchema,
  ModelCheckInputSchema,
  ModelCheckSchema,
  ModelListSchema,
  MolfError,
  PermissionExplanationSchema,
  PermissionsExplainInputSchema,
  PermissionsFileInfoSchema,
  PermissionsGrantsInputSchema,
  PermissionsGrantsSchema,
  PermissionsRevokeInputSchema,
  PermissionsRevokeResultSchema,
  PermissionsWriteInputSchema,
  roleAllows,
  roleWithArticle,
  SessionAttachmentInputSchema,
  SessionAttachmentSchema,
  SessionCreateInputSchema,
  SessionEventsInputSchema,
  SessionGetInputSchema,
  SessionGetOutputSchema,
  SessionIdInputSchema,
  SessionInfoSchema,
  SessionListInputSchema,
  SessionPromptInputSchema,
  SessionRenameInputSchema,
  SessionToolOutputInputSchema,
  ToolOutputPageSchema,
  WhoAmISchema,
  WorkerEventsInputSchema,
  type WorkerId,
  WorkerIdSchema,
  type WorkerInfo,
  WorkerInfoSchema,
} from '@molf/protocol';
import { z } from 'zod';
import { streamApprovalEvents } from '../approvals/approval-event-stream.ts';
import type { Answerer } from '../approvals/approval-gate.ts';
import type { CredentialStore } from '../auth/credential-store.ts';
import { setHeartbeat, streamCronEvents } from '../cron/index.ts';
import { historyPage } from '../sessions/history-page.ts';
import { streamWorkerEvents } from '../workers/worker-event-stream.ts';
import { createCredentialRouters } from './credentials-router.ts';
import type { RouterServices } from './router-services.ts';
import {
  adminProcedure,
  anyRoleProcedure,
  operatorProcedure,
  type RpcContext,
  router,
  viewerProcedure,
} from './trpc.ts';

/** A stored credential's name; none for a fixed token, or when the file cannot be read. */
function credentialName(credentials: CredentialStore, credentialId: string): string | undefined {
  try {
    return credentials.list().find((credential) => credential.id === credentialId)?.label;
  } catch {
    return undefined;
  }
}

/** The person behind a call, as answers and rule changes record them. */
function answererOf(ctx: RpcContext): Answerer {
  return { credentialId: ctx.credentialId, connectionId: ctx.connectionId, client: ctx.client };
}

/**
 * The procedures people's clients (CLI, web) call: sessions, approvals, permissions, workers. Routers
 * are adapters: validate with the protocol schema, call one service, return.
 */
export function createClientRouter(services: RouterServices) {
  const { registry, gate, permissions, grants, sessions, sessionEvents, agent } = services;

  async function knownSession(sessionId: string) {
    const session = await sessions.get(sessionId);
    if (session === undefined) {
      throw new MolfError('session_not_found', `no session ${sessionId}`, { field: 'sessionId' });
    }
    return session;
  }

  function withCatalog(info: WorkerInfo): WorkerInfo {
    const registration = registry.registration(info.workerId);
    const resolved = services.agents.agents(info.workerId);
    if (registration === undefined || resolved === undefined) return info;
    return {
      ...info,
      catalog: {
        skills: registration.catalog?.skills ?? [],
        agents: [...resolved.agents.values()].map((profile) => ({
          name: profile.name,
          description: profile.description,
          builtin: profile.builtin,
          ...(profile.path === undefined ? {} : { path: profile.path }),
          ...(profile.source === undefined ? {} : { source: profile.source }),
          ...(profile.tools === undefined ? {} : { tools: [...profile.tools] }),
          ...(profile.model === undefined ? {} : { model: profile.model }),
          ...(profile.maxSteps === undefined ? {} : { maxSteps: profile.maxSteps }),
        })),
        problems: services.agents.problems(info.workerId),
      },
    };
  }

  /** A worker as `workers.list` and `workers.events` give it: with its catalog and its rules file's problem. */
  function describeWorker(info: WorkerInfo, problems = gate.problems()): WorkerInfo {
    const problem = problems.find((entry) => entry.workerId === info.workerId);
    return { ...withCatalog(info), ...(problem === undefined ? {} : { permissionsProblem: problem }) };
  }

  async function deleteSession(sessionId: string): Promise<void> {
    await sessions.delete(sessionId);
    gate.clearSession(sessionId);
    sessionEvents.forget(sessionId);
  }

  async function childrenOf(parentSessionId: string): Promise<string[]> {
    const children: string[] = [];
    for (let offset = 0; ; offset += 200) {
      const page = await sessions.list({ parentSessionId, limit: 200, offset });
      children.push(...page.sessions.map((session) => session.sessionId));
      if (offset + 200 >= page.total) return children;
    }
  }

  /** The id of a worker any server on the state has registered (one may have a moment ago elsewhere). */
  async function knownWorker(workerId: WorkerId): Promise<WorkerId> {
    if ((await registry.find(workerId)) === undefined) {
      throw new MolfError('worker_not_found', `no worker with id ${workerId} has ever registered with this server`, {
        field: 'workerId',
      });
    }
    return workerId;
  }

  return router({
    ...createCredentialRouters(services),
    auth: router({
      whoami: anyRoleProcedure.output(WhoAmISchema).query(({ ctx }) => {
        const name = credentialName(services.credentials, ctx.credentialId);
        return {
          role: ctx.role,
          serverVersion: services.serverVersion,
          credentialId: ctx.credentialId,
          ...(name === undefined ? {} : { name }),
        };
      }),
    }),

    workers: router({
      /** Every known worker; an online one with the skills and agents it offers and their problems. */
      list: viewerProcedure.output(z.array(WorkerInfoSchema)).query(() => {
        const problems = gate.problems();
        return registry.list().map((info) => describeWorker(info, problems));
      }),
      /**
       * Every worker (or one) as it is now, then again at each change: connected, disconnected, its
       * MCP servers' states, its tools, skills and agents, its permissions file's problem.
       */
      events: viewerProcedure.input(WorkerEventsInputSchema).subscription(({ input, signal }) =>
        streamWorkerEvents({
          changes: services.workerChanges,
          list: () => {
            const problems = gate.problems();
            return registry.list().map((info) => describeWorker(info, problems));
          },
          describe: (workerId) => {
            const info = registry.get(workerId);
            return info === undefined ? undefined : describeWorker(info);
          },
          workerId: input.workerId,
          signal,
        }),
      ),
    }),

    models: router({
      /** The models a picker offers (default, the config's, recent sessions'), known without the network. */
      list: viewerProcedure.output(ModelListSchema).query(() => services.listModels()),
      /**
       * Whether a prompt would reach its model's provider (its key is set, the provider exists): a
       * client asks before sending, to say what to set instead of letting the turn fail.
       */
      check: operatorProcedure
        .input(ModelCheckInputSchema)
        .output(ModelCheckSchema)
        .query(async ({ input }) => {
          if (input.sessionId !== undefined) await knownSession(input.sessionId);
          return services.checkModel(input);
        }),
    }),

    sessions: router({
      create: operatorProcedure
        .input(SessionCreateInputSchema)
        .output(SessionInfoSchema)
        .mutation(async ({ input }) => {
          await knownWorker(input.workerId as WorkerId);
          return sessions.create(input);
        }),
      list: viewerProcedure
        .input(SessionListInputSchema)
        .output(
          z.object({
            sessions: z.array(SessionInfoSchema),
            total: z.number().int(),
            damaged: z.array(DamagedSessionSchema),
          }),
        )
        .query(({ input }) => sessions.list(input)),
      /** One session's metadata and state, without its history. */
      info: viewerProcedure
        .input(SessionIdInputSchema)
        .output(SessionInfoSchema)
        .query(({ input }) => knownSession(input.sessionId)),
      get: viewerProcedure
        .input(SessionGetInputSchema)
        .output(SessionGetOutputSchema)
        .query(async ({ input }) => {
          const session = await knownSession(input.sessionId);
          return { session, ...historyPage(await sessions.messages(input.sessionId), input) };
        }),
      /**
       * A page of the whole output of one of the session's tool calls whose result was cut, read by the
       * session's worker from the file the result names (never a path a client gives).
       */
      toolOutput: viewerProcedure
        .input(SessionToolOutputInputSchema)
        .output(ToolOutputPageSchema)
        .query(({ input, signal }) => services.toolResultFiles.readOutput({ ...input, signal })),
      /** The bytes of an image or document stored with one of the session's tool results. */
      attachment: viewerProcedure
        .input(SessionAttachmentInputSchema)
        .output(SessionAttachmentSchema)
        .query(({ input }) => services.toolResultFiles.readAttachment(input)),
      rename: operatorProcedure
        .input(SessionRenameInputSchema)
        .output(SessionInfoSchema)
        .mutation(async ({ input }) => {
          await knownSession(input.sessionId);
          const session = await sessions.update(input.sessionId, { name: input.name });
          // Through any server: numbered after the events of the turn another may be running.
          sessionEvents.publish(input.sessionId, { type: 'session.renamed', name: session.name }, { standalone: true });
          return session;
        }),
      /** Deletes a session and its subagents' sessions (they belong to it). */
      delete: operatorProcedure.input(SessionIdInputSchema).mutation(async ({ input }) => {
        // A damaged session can be deleted too: the store throws only for an unknown one.
        agent.abort(input.sessionId);
        for (const child of await childrenOf(input.sessionId)) await deleteSession(child);
        await deleteSession(input.sessionId);
        return { deleted: true };
      }),
      prompt: operatorProcedure.input(SessionPromptInputSchema).mutation(({ input }) => agent.prompt(input)),
      abort: operatorProcedure.input(SessionIdInputSchema).mutation(async ({ input }) => {
        await knownSession(input.sessionId);
        return { aborted: agent.abort(input.sessionId) };
      }),
      /** Every event after `lastEventId`, then live ones (tRPC tracked ids): no gap, no duplicate. */
      events: viewerProcedure.input(SessionEventsInputSchema).subscription(async function* ({ input, signal }) {
        await knownSession(input.sessionId);
        yield* sessionEvents.stream({
          sessionId: input.sessionId,
          lastEventId: input.lastEventId,
          fromNow: input.fromNow,
          fromTurnStart: input.fromTurnStart,
          signal,
        });
      }),
    }),

    approvals: router({
      approve: operatorProcedure
        .input(ApproveInputSchema)
        .output(ApprovalAnswerSchema)
        .mutation(({ input, ctx }) => {
          // "Always" writes a rule into the worker's permissions file: editing rules is an admin's.
          if (input.scope === 'always' && !roleAllows(ctx.role, 'admin')) {
            throw new MolfError(
              'forbidden',
              `saving an "always" rule needs the admin role; this credential is ${roleWithArticle(ctx.role)}: answer once or for this session`,
              { field: 'scope' },
            );
          }
          return services.answers.approve({ ...input, by: answererOf(ctx) });
        }),
      deny: operatorProcedure
        .input(DenyInputSchema)
        .output(ApprovalAnswerSchema)
        .mutation(({ input, ctx }) => services.answers.deny({ ...input, by: answererOf(ctx) })),
      list: viewerProcedure.input(ApprovalEventsInputSchema).query(({ input }) => services.answers.pending(input)),
      /** Pending approvals (and broken permission files) first, then live events. */
      events: viewerProcedure.input(ApprovalEventsInputSchema).subscription(async function* ({ input, ctx, signal }) {
        // Counted while it runs: an unattended run asks only when somebody who could answer would
        // see it. A viewer (a wall screen) sees approvals but cannot answer them: a run asking it
        // would wait out its whole wait for nothing instead of being denied at once.
        const stop = roleAllows(ctx.role, 'operator') ? services.approvalWatchers.add(input) : undefined;
        try {
          yield* streamApprovalEvents(
            {
              problems: () => gate.problems(),
              pending: (filter) => services.answers.pending(filter),
              subscribe: (listener) => services.answers.subscribe(listener),
            },
            input,
            signal,
          );
        } finally {
          stop?.();
        }
      }),
    }),

    cron: router({
      list: viewerProcedure
        .input(CronListInputSchema)
        .output(z.array(CronJobSchema))
        .query(({ input }) => services.cron.list(input)),
      /** A job made by a person: without `session`, each run gets a new session. */
      add: operatorProcedure
        .input(CronAddInputSchema)
        .output(CronJobSchema)
        .mutation(async ({ input, ctx }) => {
          await knownWorker(input.workerId);
          return services.cron.add(input, {
            createdBy: { credentialId: ctx.credentialId, ...(ctx.client === undefined ? {} : { client: ctx.client }) },
            defaultTarget: { type: 'new' },
          });
        }),
      update: operatorProcedure
        .input(CronUpdateInputSchema)
        .output(CronJobSchema)
        .mutation(({ input }) => services.cron.update(input)),
      remove: operatorProcedure
        .input(CronJobIdInputSchema)
        .output(z.object({ removed: z.boolean() }))
        .mutation(async ({ input }) => {
          if (!(await services.cron.remove(input.jobId))) {
            throw new MolfError('job_not_found', `no cron job ${input.jobId}`, { field: 'jobId' });
          }
          return { removed: true };
        }),
      /** Runs the job once now, outside its schedule; answers with the job and how the run went. */
      run: operatorProcedure
        .input(CronJobIdInputSchema)
        .output(CronJobSchema)
        .mutation(({ input }) => services.cron.runNow(input.jobId)),
      /**
       * Turns a worker's heartbeat on or off: a job that runs the checklist in the project's
       * HEARTBEAT.md (skipped when it has none) and reports only what needs attention. Answers the
       * job, or null when turned off.
       */
      heartbeat: operatorProcedure
        .input(CronHeartbeatInputSchema)
        .output(CronJobSchema.nullable())
        .mutation(async ({ input, ctx }) => {
          await knownWorker(input.workerId as WorkerId);
          const job = await setHeartbeat({ scheduler: services.cron, sessions }, input, {
            credentialId: ctx.credentialId,
            ...(ctx.client === undefined ? {} : { client: ctx.client }),
          });
          return job ?? null;
        }),
      /** `cron.fired`, `cron.failed` and `cron.reported` from now on. */
      events: viewerProcedure
        .input(CronListInputSchema)
        .subscription(({ input, signal }) => streamCronEvents(services.cron, input, signal)),
    }),

    permissions: router({
      show: operatorProcedure
        .input(z.object({ workerId: WorkerIdSchema }))
        .output(PermissionsFileInfoSchema)
        .query(async ({ input }) => {
          const workerId = await knownWorker(input.workerId);
          const { text, version } = await permissions.readText(workerId);
          const { problem } = await permissions.load(workerId);
          return {
            workerId,
            path: permissions.pathOf(workerId),
            text,
            version,
            ...(problem === undefined ? {} : { problem }),
          };
        }),
      write: adminProcedure.input(PermissionsWriteInputSchema).mutation(async ({ input, ctx }) => {
        const workerId = await knownWorker(input.workerId);
        await permissions.writeText(workerId, input.text, { baseVersion: input.baseVersion });
        gate.recordRulesChange({ workerId, by: answererOf(ctx) });
        return { path: permissions.pathOf(workerId) };
      }),
      explain: operatorProcedure
        .input(PermissionsExplainInputSchema)
        .output(PermissionExplanationSchema)
        .query(async ({ input }) => gate.explain({ ...input, workerId: await knownWorker(input.workerId) })),
      /** The grants "always" answers saved in the worker's file, with who gave them, when, from which client. */
      grants: operatorProcedure
        .input(PermissionsGrantsInputSchema)
        .output(PermissionsGrantsSchema)
        .query(async ({ input }) => grants.list(await knownWorker(input.workerId))),
      /** Removes a grant's rule from the file; the next call is judged without it. */
      revoke: adminProcedure
        .input(PermissionsRevokeInputSchema)
        .output(PermissionsRevokeResultSchema)
        .mutation(async ({ input, ctx }) =>
          grants.revoke({ workerId: await knownWorker(input.workerId), grantId: input.grantId, by: answererOf(ctx) }),
        ),
    }),
  });
}

export type ClientRouter = ReturnType<typeof createClientRouter>;
