import {
  ApprovalAnswerSchema,
  ApprovalEventsInputSchema,
  ApproveInputSchema,
  DamagedSessionSchema,
  DenyInputSchema,
  type JobResultAck,
  JobResultInputSchema,
  McpServerApprovalAnswerSchema,
  McpServerApprovalInputSchema,
  McpServerApprovalWithdrawInputSchema,
  MolfError,
  PermissionExplanationSchema,
  PermissionsExplainInputSchema,
  PermissionsFileInfoSchema,
  PermissionsWriteInputSchema,
  SessionCreateInputSchema,
  SessionEventsInputSchema,
  SessionIdInputSchema,
  SessionInfoSchema,
  SessionListInputSchema,
  SessionMessageSchema,
  SessionPromptInputSchema,
  SessionRenameInputSchema,
  WhoAmISchema,
  type WorkerId,
  WorkerIdSchema,
  WorkerInfoSchema,
  WorkerJobsInputSchema,
  WorkerResponseInputSchema,
  WorkerToolsInputSchema,
} from '@molf/protocol';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import type { AgentRunner } from '../agent/index.ts';
import { streamApprovalEvents } from '../approvals/approval-event-stream.ts';
import type { ApprovalGate } from '../approvals/approval-gate.ts';
import { requestMcpServerStart, withdrawMcpServerStart } from '../approvals/mcp-server-approvals.ts';
import type { PermissionsStore } from '../approvals/permissions-store.ts';
import type { SessionEvents } from '../sessions/session-events.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import { anyRoleProcedure, clientProcedure, router, workerProcedure } from './trpc.ts';

export type RouterServices = {
  registry: WorkerRegistry;
  /** Whether a credential still exists (fixed ones always do). */
  isCredentialActive: (credentialId: string) => boolean;
  /** Whether a credential is one of the server's fixed tokens. */
  isCredentialFixed: (credentialId: string) => boolean;
  dispatcher: JobDispatcher;
  serverVersion: string;
  gate: ApprovalGate;
  permissions: PermissionsStore;
  sessions: SessionStore;
  sessionEvents: SessionEvents;
  agent: AgentRunner;
  onWorkerEvent: (event: { type: 'worker.connected' | 'worker.disconnected'; workerId: string; name: string }) => void;
};

/** Routers are adapters: validate with the protocol schema, call one service, return. */
export function createAppRouter(services: RouterServices) {
  const { registry, dispatcher, gate, permissions, sessions, sessionEvents, agent } = services;

  async function knownSession(sessionId: string) {
    const session = await sessions.get(sessionId);
    if (session === undefined) {
      throw new MolfError('session_not_found', `no session ${sessionId}`, { field: 'sessionId' });
    }
    return session;
  }

  /** A worker credential may act only for the worker ids it registered. */
  function ownedWorker(workerId: WorkerId, credentialId: string): void {
    if (registry.ownerOf(workerId) !== credentialId) {
      throw new MolfError('forbidden', `worker id ${workerId} is not registered with this credential`);
    }
  }

  function knownWorker(workerId: WorkerId): WorkerId {
    if (registry.get(workerId) === undefined) {
      throw new MolfError('worker_not_found', `no worker with id ${workerId} has ever registered with this server`, {
        field: 'workerId',
      });
    }
    return workerId;
  }

  return router({
    auth: router({
      whoami: anyRoleProcedure.output(WhoAmISchema).query(({ ctx }) => ({
        role: ctx.role,
        serverVersion: services.serverVersion,
      })),
    }),

    workers: router({
      list: clientProcedure.output(z.array(WorkerInfoSchema)).query(() => registry.list()),
    }),

    sessions: router({
      create: clientProcedure
        .input(SessionCreateInputSchema)
        .output(SessionInfoSchema)
        .mutation(({ input }) => {
          knownWorker(input.workerId);
          return sessions.create(input);
        }),
      list: clientProcedure
        .input(SessionListInputSchema)
        .output(
          z.object({
            sessions: z.array(SessionInfoSchema),
            total: z.number().int(),
            damaged: z.array(DamagedSessionSchema),
          }),
        )
        .query(({ input }) => sessions.list(input)),
      get: clientProcedure
        .input(SessionIdInputSchema)
        .output(z.object({ session: SessionInfoSchema, messages: z.array(SessionMessageSchema) }))
        .query(async ({ input }) => {
          const session = await knownSession(input.sessionId);
          return { session, messages: await sessions.messages(input.sessionId) };
        }),
      rename: clientProcedure
        .input(SessionRenameInputSchema)
        .output(SessionInfoSchema)
        .mutation(async ({ input }) => {
          await knownSession(input.sessionId);
          return sessions.update(input.sessionId, { name: input.name });
        }),
      delete: clientProcedure.input(SessionIdInputSchema).mutation(async ({ input }) => {
        // A damaged session can be deleted too: the store throws only for an unknown one.
        agent.abort(input.sessionId);
        await sessions.delete(input.sessionId);
        gate.clearSession(input.sessionId);
        sessionEvents.forget(input.sessionId);
        return { deleted: true };
      }),
      prompt: clientProcedure.input(SessionPromptInputSchema).mutation(({ input }) => agent.prompt(input)),
      abort: clientProcedure.input(SessionIdInputSchema).mutation(async ({ input }) => {
        await knownSession(input.sessionId);
        return { aborted: agent.abort(input.sessionId) };
      }),
      /** Every event after `lastEventId`, then live ones (tRPC tracked ids): no gap, no duplicate. */
      events: clientProcedure.input(SessionEventsInputSchema).subscription(async function* ({ input, signal }) {
        await knownSession(input.sessionId);
        yield* sessionEvents.stream({
          sessionId: input.sessionId,
          lastEventId: input.lastEventId,
          fromNow: input.fromNow,
          signal,
        });
      }),
    }),

    approvals: router({
      approve: clientProcedure
        .input(ApproveInputSchema)
        .output(ApprovalAnswerSchema)
        .mutation(({ input, ctx }) =>
          gate.approve({ ...input, by: { credentialId: ctx.credentialId, connectionId: ctx.connectionId } }),
        ),
      deny: clientProcedure
        .input(DenyInputSchema)
        .output(ApprovalAnswerSchema)
        .mutation(({ input, ctx }) =>
          gate.deny({ ...input, by: { credentialId: ctx.credentialId, connectionId: ctx.connectionId } }),
        ),
      list: clientProcedure.input(ApprovalEventsInputSchema).query(({ input }) => gate.pending(input)),
      /** Pending approvals (and broken permission files) first, then live events. */
      events: clientProcedure
        .input(ApprovalEventsInputSchema)
        .subscription(({ input, signal }) => streamApprovalEvents(gate, input, signal)),
    }),

    permissions: router({
      show: clientProcedure
        .input(z.object({ workerId: WorkerIdSchema }))
        .output(PermissionsFileInfoSchema)
        .query(async ({ input }) => {
          const workerId = knownWorker(input.workerId);
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
      write: clientProcedure.input(PermissionsWriteInputSchema).mutation(async ({ input, ctx }) => {
        const workerId = knownWorker(input.workerId);
        await permissions.writeText(workerId, input.text, { baseVersion: input.baseVersion });
        gate.recordRulesChange({ workerId, by: { credentialId: ctx.credentialId, connectionId: ctx.connectionId } });
        return { path: permissions.pathOf(workerId) };
      }),
      explain: clientProcedure
        .input(PermissionsExplainInputSchema)
        .output(PermissionExplanationSchema)
        .query(({ input }) => gate.explain({ ...input, workerId: knownWorker(input.workerId) })),
    }),

    worker: router({
      /**
       * Subscribing registers: the worker is online exactly while this subscription lives. The
       * tRPC client re-subscribes after a reconnect with the last event id, which both
       * re-registers and resumes the job stream where it stopped.
       */
      jobs: workerProcedure.input(WorkerJobsInputSchema).subscription(async function* ({ input, ctx, signal }) {
        const { registration } = input;
        const outcome = registry.register(registration, {
          credentialId: ctx.credentialId,
          isActive: services.isCredentialActive,
          mayClaimAny: services.isCredentialFixed(ctx.credentialId),
        });
        if (outcome.type === 'owned_by_another_credential') {
          throw new TRPCError({
            code: 'FORBIDDEN',
            message:
              `worker id ${registration.workerId} belongs to worker credential ${outcome.ownerCredentialId}; ` +
              `revoke that one on the server (\`molf token revoke ${outcome.ownerCredentialId}\`) to move the id to this credential`,
          });
        }
        const { lease, previousInstanceId } = outcome;
        dispatcher.onRegistered({
          workerId: registration.workerId,
          instanceId: registration.instanceId,
          previousInstanceId,
        });
        services.onWorkerEvent({ type: 'worker.connected', workerId: registration.workerId, name: registration.name });
        try {
          yield* dispatcher.stream({ lease, lastEventId: input.lastEventId, signal });
        } finally {
          if (registry.release(lease)) {
            gate.workerOffline(registration.workerId);
            services.onWorkerEvent({
              type: 'worker.disconnected',
              workerId: registration.workerId,
              name: registration.name,
            });
          }
        }
      }),

      tools: workerProcedure.input(WorkerToolsInputSchema).mutation(({ input, ctx }) => {
        if (registry.ownerOf(input.workerId) !== ctx.credentialId) {
          throw new TRPCError({
            code: 'FORBIDDEN',
            message: `worker id ${input.workerId} is not registered with this credential`,
          });
        }
        return { updated: registry.updateTools(input.workerId, input.tools) };
      }),

      /** May this worker start a server that is new or changed in its .mcp.json? Waits for the gate. */
      mcpServerApproval: workerProcedure
        .input(McpServerApprovalInputSchema)
        .output(McpServerApprovalAnswerSchema)
        .mutation(({ input, ctx }) => {
          ownedWorker(input.workerId, ctx.credentialId);
          return requestMcpServerStart(gate, input);
        }),
      mcpServerApprovalWithdraw: workerProcedure
        .input(McpServerApprovalWithdrawInputSchema)
        .mutation(({ input, ctx }) => {
          ownedWorker(input.workerId, ctx.credentialId);
          return withdrawMcpServerStart(gate, input);
        }),

      // No output validation on this hot path: the server builds the acknowledgement itself.
      result: workerProcedure.input(JobResultInputSchema).mutation(({ input, ctx }): JobResultAck => {
        if (registry.ownerOf(input.workerId) !== ctx.credentialId) {
          throw new TRPCError({
            code: 'FORBIDDEN',
            message: `worker id ${input.workerId} is not registered with this credential`,
          });
        }
        return { accepted: dispatcher.acceptResult(input) };
      }),
      /** A worker answers one of the server's requests (paths/resolve, instructions/read). */
      respond: workerProcedure.input(WorkerResponseInputSchema).mutation(({ input, ctx }): JobResultAck => {
        if (registry.ownerOf(input.workerId) !== ctx.credentialId) {
          throw new MolfError('forbidden', `worker id ${input.workerId} is not registered with this credential`);
        }
        return { accepted: dispatcher.acceptResponse(input) };
      }),
    }),
  });
}

export type AppRouter = ReturnType<typeof createAppRouter>;
