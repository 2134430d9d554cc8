import {
  type JobResultAck,
  JobResultInputSchema,
  WhoAmISchema,
  WorkerInfoSchema,
  WorkerJobsInputSchema,
} from '@molf/protocol';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
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
  onWorkerEvent: (event: { type: 'worker.connected' | 'worker.disconnected'; workerId: string; name: string }) => void;
};

/** Routers are adapters: validate with the protocol schema, call one service, return. */
export function createAppRouter(services: RouterServices) {
  const { registry, dispatcher } = services;

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
            services.onWorkerEvent({
              type: 'worker.disconnected',
              workerId: registration.workerId,
              name: registration.name,
            });
          }
        }
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
    }),
  });
}

export type AppRouter = ReturnType<typeof createAppRouter>;
