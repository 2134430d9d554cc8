import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { WorkerRegistration } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { backendTitle, type StatePlace, stateBackends } from '../testing/state-backends.ts';
import { createTestRegistration } from '../testing/test-link.ts';
import { loadWorkerRegistry, type WorkerRegistry, workerStateDocument } from './worker-registry.ts';

const logger = createSilentLogger();

/** A credential that registers workers; `active` says which credentials still exist. */
const as = (credentialId: string, options: { active?: (id: string) => boolean; mayClaimAny?: boolean } = {}) => ({
  credentialId,
  isActive: options.active ?? (() => true),
  mayClaimAny: options.mayClaimAny ?? false,
});

/** A registry over the place: a restarted server, or another server on the database. */
async function openRegistry(place: StatePlace): Promise<WorkerRegistry> {
  const { documents } = await place.open();
  return loadWorkerRegistry({ documents, logger });
}

/** The same worker again, as a new process of it (another instance id). */
const again = (registration: WorkerRegistration): WorkerRegistration => ({
  ...registration,
  instanceId: randomUUID(),
});

for (const backend of stateBackends()) {
  const suite = backend.unavailable === undefined ? describe : describe.skip;
  suite(backendTitle('worker registry', backend), () => {
    it('keeps each worker across a restart, offline, with its owner and last registration', async () => {
      await using place = await backend.prepare();
      const registry = await openRegistry(place);
      const registration = { ...createTestRegistration(['echo', 'read_file']), name: 'kept' };
      const outcome = await registry.register(registration, as('cred_x'));
      expect(outcome.type).toBe('registered');
      expect(registry.get(registration.workerId)?.state).toBe('online');
      if (outcome.type === 'registered') registry.release(outcome.lease);
      await registry.flush();

      const restarted = await openRegistry(place);
      expect(restarted.list()).toEqual([
        expect.objectContaining({
          workerId: registration.workerId,
          name: 'kept',
          tools: ['echo', 'read_file'],
          state: 'offline',
        }),
      ]);
      expect(restarted.list()[0]).not.toHaveProperty('leaseId');
      expect(restarted.ownerOf(registration.workerId)).toBe('cred_x');
    });

    it('refuses a worker id to another credential while its owner exists, and gives it once the owner is gone', async () => {
      await using place = await backend.prepare();
      const registry = await openRegistry(place);
      const registration = createTestRegistration();
      await registry.register(registration, as('cred_x'));
      expect(await registry.register(again(registration), as('cred_y'))).toEqual({
        type: 'owned_by_another_credential',
        ownerCredentialId: 'cred_x',
      });
      expect(registry.ownerOf(registration.workerId)).toBe('cred_x');
      expect((await registry.register(again(registration), as('cred_y', { mayClaimAny: true }))).type).toBe(
        'registered',
      );
      expect(registry.ownerOf(registration.workerId)).toBe('cred_y');
      const revokedY = (id: string) => id !== 'cred_y';
      expect((await registry.register(again(registration), as('cred_z', { active: revokedY }))).type).toBe(
        'registered',
      );
      expect(registry.ownerOf(registration.workerId)).toBe('cred_z');
      await registry.flush();
    });

    it('skips a damaged worker state at load, and the id is free again', async () => {
      await using place = await backend.prepare();
      const { documents } = await place.open();
      const registration = createTestRegistration();
      await documents.write(workerStateDocument(registration.workerId), '{"workerId": ');
      const registry = await loadWorkerRegistry({ documents, logger });
      expect(registry.list()).toEqual([]);
      expect((await registry.register(registration, as('cred_y'))).type).toBe('registered');
      await registry.flush();
    });

    it('keeps a worker id bound on one server from being claimed by another credential on another server', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await openRegistry(place), await openRegistry(place)];
      const registration = createTestRegistration();
      expect((await one.register(registration, as('cred_x'))).type).toBe('registered');
      // The second server started before the binding, so it holds nothing of it in memory.
      expect(two.ownerOf(registration.workerId)).toBeUndefined();
      expect(await two.register(again(registration), as('cred_y'))).toEqual({
        type: 'owned_by_another_credential',
        ownerCredentialId: 'cred_x',
      });
      expect((await two.register(again(registration), as('cred_x'))).type).toBe('registered');
      await Promise.all([one.flush(), two.flush()]);
    });

    it('finds a worker that registered with another server a moment ago, before the change reached this one', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await openRegistry(place), await openRegistry(place)];
      const registration = { ...createTestRegistration(['echo']), name: 'just now' };
      expect((await one.register(registration, as('cred_x'))).type).toBe('registered');
      expect(await two.find(registration.workerId)).toMatchObject({
        workerId: registration.workerId,
        name: 'just now',
      });
      expect(two.get(registration.workerId)).toMatchObject({ name: 'just now' });
      expect(await two.find(randomUUID() as typeof registration.workerId)).toBeUndefined();
      expect(await two.find('../..' as typeof registration.workerId)).toBeUndefined();
      await Promise.all([one.flush(), two.flush()]);
    });

    it('binds a new worker id to exactly one of two credentials registering it on two servers at once', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await openRegistry(place), await openRegistry(place)];
      const registration = createTestRegistration();
      const outcomes = await Promise.all([
        one.register(registration, as('cred_x')),
        two.register(again(registration), as('cred_y')),
      ]);
      const winners = outcomes.filter((outcome) => outcome.type === 'registered');
      expect(winners).toHaveLength(1);
      const owner = outcomes[0]?.type === 'registered' ? 'cred_x' : 'cred_y';
      expect(outcomes.find((outcome) => outcome.type === 'owned_by_another_credential')).toEqual({
        type: 'owned_by_another_credential',
        ownerCredentialId: owner,
      });
      const restarted = await openRegistry(place);
      expect(restarted.ownerOf(registration.workerId)).toBe(owner);
      await Promise.all([one.flush(), two.flush()]);
    });

    it("never lets an older registration's release on one server undo the owner a newer one stored on another", async () => {
      await using place = await backend.prepare();
      const [one, two] = [await openRegistry(place), await openRegistry(place)];
      const registration = createTestRegistration();
      const first = await one.register(registration, as('cred_x'));
      if (first.type !== 'registered') throw new Error('refused');
      // cred_x is revoked: cred_y takes the id on the second server.
      expect((await two.register(again(registration), as('cred_y', { active: (id) => id !== 'cred_x' }))).type).toBe(
        'registered',
      );
      expect(one.release(first.lease)).toBe(true);
      await one.flush();
      await two.flush();
      const restarted = await openRegistry(place);
      expect(restarted.ownerOf(registration.workerId)).toBe('cred_y');
    });
  });
}
