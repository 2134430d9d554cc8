import {
  type JobResultAck,
  JobResultInputSchema,
  McpServerApprovalAnswerSchema,
  McpServerApprovalInputSchema,
  McpServerApprovalWithdrawInputSchema,
  MolfError,
  WorkerCatalogInputSchema,
  type WorkerId,
  WorkerJobsInputSchema,
  WorkerMcpServersInputSchema,
  WorkerResponseInputSchema,
  WorkerToolsInputSchema,
} from '@molf/protocol';
import { TRPCError } from '@trpc/server';
import { requestMcpServerStart, withdrawMcpServerStart } from '../approvals/mcp-server-approvals.ts';
import type { RouterServices } from './router-services.ts';
import { router, workerProcedure } from './trpc.ts';

/** The procedures a worker calls: its job stream (subscribing registers), results and answers, its tools. */
export function createWorkerRouter(services: RouterServices) {
  const { registry, dispatcher, gate } = services;

  /** A worker left this server: its calls' waiting approvals are denied, unless it is back somewhere in time. */
  function denyWaitingApprovals(workerId: WorkerId): void {
    const graceMs = services.workerReturnMs;
    if (graceMs === undefined) {
      gate.workerOffline(workerId);
      return;
    }
    setTimeout(() => {
      if (registry.registration(workerId) === undefined) gate.workerOffline(workerId);
    }, graceMs).unref();
  }

  /** A worker credential may act only for the worker ids it registered. */
  function ownedWorker(workerId: WorkerId, credentialId: string): void {
    if (registry.ownerOf(workerId) !== credentialId) {
      throw new MolfError('forbidden', `worker id ${workerId} is not registered with this credential`);
    }
  }

  return router({
    /**
     * Subscribing registers: the worker is online exactly while this subscription lives. The
     * tRPC client re-subscribes after a reconnect with the last event id, which both
     * re-registers and resumes the job stream where it stopped.
     */
    jobs: workerProcedure.input(WorkerJobsInputSchema).subscription(async function* ({ input, ctx, signal }) {
      const { registration } = input;
      const outcome = await registry.register(registration, {
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
          denyWaitingApprovals(registration.workerId);
          dispatcher.onOffline(registration.workerId);
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
      const updated = registry.updateTools(input.workerId, input.tools);
      if (updated) services.workerChanges.publish({ type: 'worker.changed', workerId: input.workerId });
      return { updated };
    }),

    /** The worker's skills or agents changed: the whole snapshot, applied from the next model step. */
    catalog: workerProcedure.input(WorkerCatalogInputSchema).mutation(({ input, ctx }) => {
      ownedWorker(input.workerId, ctx.credentialId);
      const outcome = registry.updateCatalog(input.workerId, { instanceId: input.instanceId, catalog: input.catalog });
      if (outcome === 'updated') {
        services.onCatalogChanged(input.workerId);
        services.workerChanges.publish({ type: 'worker.changed', workerId: input.workerId });
      }
      return { updated: outcome === 'updated' };
    }),

    /** The worker's MCP servers changed state: the whole snapshot, shown in `workers.list`. */
    mcpServers: workerProcedure.input(WorkerMcpServersInputSchema).mutation(({ input, ctx }) => {
      ownedWorker(input.workerId, ctx.credentialId);
      const outcome = registry.updateMcpServers(input.workerId, { instanceId: input.instanceId, mcp: input.mcp });
      if (outcome === 'updated') services.workerChanges.publish({ type: 'worker.changed', workerId: input.workerId });
      return { updated: outcome === 'updated' };
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
    result: workerProcedure.input(JobResultInputSchema).mutation(async ({ input, ctx }): Promise<JobResultAck> => {
      if (registry.ownerOf(input.workerId) !== ctx.credentialId) {
        throw new TRPCError({
          code: 'FORBIDDEN',
          message: `worker id ${input.workerId} is not registered with this credential`,
        });
      }
      return { accepted: await dispatcher.acceptResult(input) };
    }),
    /** A worker answers one of the server's requests (paths/resolve, instructions/read). */
    respond: workerProcedure.input(WorkerResponseInputSchema).mutation(({ input, ctx }): JobResultAck => {
      if (registry.ownerOf(input.workerId) !== ctx.credentialId) {
        throw new MolfError('forbidden', `worker id ${input.workerId} is not registered with this credential`);
      }
      return { accepted: dispatcher.acceptResponse(input) };
    }),
  });
}

export type WorkerRouter = ReturnType<typeof createWorkerRouter>;
