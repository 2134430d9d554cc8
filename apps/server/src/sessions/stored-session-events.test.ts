import { createSilentLogger } from '@molf/logging';
import type { SessionEvent, SessionEventBody } from '@molf/protocol';
import { startPostgresCluster } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../database/index.ts';
import { takeEvents } from '../testing/session-test-data.ts';
import { createTestDatabase, openTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import { EVENTS_CHANNEL, openPostgresEventLog } from './postgres-event-log.ts';
import { createSessionEvents, type SessionEvents } from './session-events.ts';
import type { StoredEventLog } from './stored-event-log.ts';

const logger = createSilentLogger();
const unavailable = postgresUnavailable();
const WAIT_MS = 60_000;

const status = (value: 'busy' | 'idle') => ({ type: 'status', status: value }) as const;
const started = (turnId: string) => ({ type: 'turn.started', turnId, messageId: 'm', model: 'f/m' }) as const;
const delta = (turnId: string, text: string) => ({ type: 'message.delta', turnId, text }) as const;

/** Events of `sessionId` as an instance numbers them, from `first` on. */
function numbered(sessionId: string, first: number, bodies: readonly SessionEventBody[]): SessionEvent[] {
  return bodies.map(
    (body, index) => ({ ...body, sessionId, seq: first + index, at: '2026-11-25T00:00:00.000Z' }) as SessionEvent,
  );
}

/** Instances of the events service over one database: each its own pool, as separate servers. */
async function instances(url: string, count: number) {
  const opened: Array<{ database: Database; events: SessionEvents }> = [];
  for (let index = 0; index < count; index += 1) {
    const database = await openDatabase({ url, logger, maxConnections: 3 });
    const storage = await openPostgresEventLog({ database, logger });
    opened.push({ database, events: createSessionEvents({ storage, logger }) });
  }
  return {
    events: opened.map((instance) => instance.events),
    async [Symbol.asyncDispose]() {
      for (const instance of opened) {
        await instance.events.close();
        await instance.database.close();
      }
    },
  };
}

/**
 * Two instances over one database: `one` publishes; `two` follows, and each query it makes of the
 * stored events is noted in `queries` (`read {session} after {seq}`, `readMany {sessions}`).
 */
async function publisherAndCountingFollower(url: string) {
  const opened = await Promise.all([0, 1].map(() => openDatabase({ url, logger, maxConnections: 3 })));
  const [first, second] = opened as [Database, Database];
  const one = createSessionEvents({ storage: await openPostgresEventLog({ database: first, logger }), logger });
  const stored = await openPostgresEventLog({ database: second, logger });
  const queries: string[] = [];
  const two = createSessionEvents({
    storage: {
      ...stored,
      read: (sessionId, afterSeq, limit) => {
        queries.push(`read ${sessionId} after ${afterSeq}`);
        return stored.read(sessionId, afterSeq, limit);
      },
      readMany: (requests, limit) => {
        queries.push(`readMany ${requests.length}`);
        return stored.readMany(requests, limit);
      },
    },
    logger,
  });
  return {
    one,
    two,
    /** The publisher's database, to send what it would not. */
    database: first,
    queries,
    async [Symbol.asyncDispose]() {
      for (const events of [one, two]) await events.close();
      for (const database of opened) await database.close();
    },
  };
}

describe.skipIf(unavailable !== undefined)(
  `session events stored in PostgreSQL${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('gives subscribers on every instance the events one instance publishes, in order, once stored', async () => {
      await using created = await createTestDatabase();
      await using servers = await instances(created.url, 2);
      const [one, two] = servers.events as [SessionEvents, SessionEvents];
      const controller = new AbortController();
      const onTwo = two.stream({ sessionId: 's', lastEventId: null, fromNow: true, signal: controller.signal });
      const onOne = one.stream({ sessionId: 's', lastEventId: null, fromNow: true, signal: controller.signal });
      // Both subscriptions start on their first read.
      const readingTwo = takeEvents(onTwo, 4);
      const readingOne = takeEvents(onOne, 4);
      await new Promise((resolveLater) => setTimeout(resolveLater, 200));
      one.publish('s', status('busy'));
      one.publish('s', { type: 'turn.started', turnId: 't1', messageId: 'm1', model: 'f/m' });
      for (const text of ['Hel', 'lo']) one.publish('s', { type: 'message.delta', turnId: 't1', text });
      one.publish('s', { type: 'turn.ended', turnId: 't1', reason: 'completed' });
      const seen = await readingTwo;
      expect(seen.map(({ data }) => [data.seq, data.type])).toEqual([
        [1, 'status'],
        [2, 'turn.started'],
        [3, 'message.delta'],
        [4, 'turn.ended'],
      ]);
      expect((await readingOne).map(({ id }) => id)).toEqual(seen.map(({ id }) => id));
      controller.abort();
    });

    it('keeps a session’s newest events and resyncs a subscriber whose last id is older, then follows on without a gap', async () => {
      await using created = await createTestDatabase();
      const database = await openDatabase({ url: created.url, logger, maxConnections: 3 });
      const storage = await openPostgresEventLog({ database, logger, kept: 1_000 });
      const events = createSessionEvents({ storage, logger });
      try {
        for (let index = 0; index < 2_600; index += 1) events.publish('s', status('busy'));
        const controller = new AbortController();
        const all = await takeEvents(
          events.stream({ sessionId: 's', lastEventId: null, signal: controller.signal }),
          1,
        );
        const epoch = all[0]?.id.split(':')[0];
        // All stored (the oldest deleted as they went).
        await waitFor(async () => {
          const [row] = await database.sql<{ newest: string | null }[]>`
            select max(seq) as newest from session_events where session_id = 's'`;
          return Number(row?.newest) === 2_600;
        });
        const [counted] = await database.sql<{ count: string; oldest: string }[]>`
          select count(*) as count, min(seq) as oldest from session_events where session_id = 's'`;
        expect(Number(counted?.count)).toBeGreaterThanOrEqual(1_000);
        expect(Number(counted?.count)).toBeLessThanOrEqual(2_000);
        // Another instance, which keeps nothing of this session in memory, resumes an old subscriber.
        await using servers = await instances(created.url, 1);
        const [other] = servers.events as [SessionEvents];
        const resumed = await takeEvents(
          other.stream({ sessionId: 's', lastEventId: `${epoch}:5`, signal: controller.signal }),
          2_600 - Number(counted?.oldest) + 2,
        );
        expect(resumed[0]?.data.type).toBe('session.resync');
        expect(resumed.slice(1).map(({ data }) => data.seq)).toEqual(
          Array.from({ length: 2_600 - Number(counted?.oldest) + 1 }, (_, index) => Number(counted?.oldest) + index),
        );
        controller.abort();
      } finally {
        await events.close();
        await database.close();
      }
    });

    it('shows its own events to its subscribers without reading them back, though their announcement comes before the write’s answer', async () => {
      await using created = await createTestDatabase();
      const database = await openDatabase({ url: created.url, logger, maxConnections: 3 });
      const stored = await openPostgresEventLog({ database, logger });
      const reads: number[] = [];
      const storage: StoredEventLog = {
        ...stored,
        // The answer to each write comes well after the NOTIFY, which is sent at commit.
        write: async (batch) => {
          const written = await stored.write(batch);
          await new Promise((resolveLater) => setTimeout(resolveLater, 150));
          return written;
        },
        read: (sessionId, afterSeq, limit) => {
          reads.push(afterSeq);
          return stored.read(sessionId, afterSeq, limit);
        },
      };
      const events = createSessionEvents({ storage, logger });
      try {
        const controller = new AbortController();
        const reading = takeEvents(
          events.stream({ sessionId: 's', lastEventId: null, fromNow: true, signal: controller.signal }),
          6,
        );
        await new Promise((resolveLater) => setTimeout(resolveLater, 200));
        for (let round = 0; round < 3; round += 1) {
          events.publish('s', status('busy'));
          events.publish('s', status('idle'));
          await new Promise((resolveLater) => setTimeout(resolveLater, 50));
        }
        expect((await reading).map(({ data }) => data.seq)).toEqual([1, 2, 3, 4, 5, 6]);
        controller.abort();
        expect(reads).toEqual([]);
      } finally {
        await events.close();
        await database.close();
      }
    });

    it.each([
      {
        what: 'shows the events one announcement carries, of many sessions, without a query, each session in order',
        text: 'short',
        queries: [],
      },
      {
        what: 'reads the events of many sessions too large to be carried with one query, each session in order',
        // Five sessions' renames of 2,000 characters: more than an announcement carries.
        text: 'x'.repeat(2_000),
        queries: ['readMany 5'],
      },
    ])('$what', async ({ text, queries: expected }) => {
      await using created = await createTestDatabase();
      await using pair = await publisherAndCountingFollower(created.url);
      const { one, two, queries } = pair;
      const sessions = ['s1', 's2', 's3', 's4', 's5'];
      const controller = new AbortController();
      const readings = sessions.map((sessionId) =>
        takeEvents(two.stream({ sessionId, lastEventId: null, fromNow: true, signal: controller.signal }), 3),
      );
      // The publishing instance reads where each session stands (as a running instance has), so that
      // its events of one tick go out together.
      await Promise.all(
        sessions.map((sessionId) =>
          takeEvents(
            one.stream({ sessionId, lastEventId: null, fromNow: true, signal: AbortSignal.timeout(300) }),
            1,
          ).catch(() => []),
        ),
      );
      // One tick: one batch, one statement, one announcement of the five sessions.
      for (const sessionId of sessions) {
        one.publish(sessionId, status('busy'));
        one.publish(sessionId, { type: 'session.renamed', name: `${sessionId} ${text}` });
        one.publish(sessionId, status('idle'));
      }
      for (const [index, reading] of readings.entries()) {
        expect((await reading).map(({ data }) => [data.sessionId, data.seq, data.type])).toEqual([
          [sessions[index], 1, 'status'],
          [sessions[index], 2, 'session.renamed'],
          [sessions[index], 3, 'status'],
        ]);
      }
      controller.abort();
      expect(queries).toEqual(expected);
    });

    it('reads the table for what it follows when an announcement is not one it can read, and follows on', async () => {
      await using created = await createTestDatabase();
      await using pair = await publisherAndCountingFollower(created.url);
      const { one, two, queries } = pair;
      const controller = new AbortController();
      const reading = takeEvents(
        two.stream({ sessionId: 's', lastEventId: null, fromNow: true, signal: controller.signal }),
        2,
      );
      await new Promise((resolveLater) => setTimeout(resolveLater, 200));
      for (const junk of ['[not json', '[{"type":"status"}]', '[1,2]', '{"sessionId":"s"}']) {
        await pair.database.sql`select pg_notify(${EVENTS_CHANNEL}, ${junk})`;
      }
      await waitFor(async () => queries.length > 0);
      expect(queries[0]).toBe('read s after 0');
      one.publish('s', status('busy'));
      one.publish('s', status('idle'));
      expect((await reading).map(({ data }) => [data.seq, data.type])).toEqual([
        [1, 'status'],
        [2, 'status'],
      ]);
      controller.abort();
    });

    it('resumes a subscriber on another instance after its last id, with no gap and no duplicate', async () => {
      await using created = await createTestDatabase();
      await using servers = await instances(created.url, 2);
      const [one, two] = servers.events as [SessionEvents, SessionEvents];
      for (let index = 0; index < 5; index += 1) one.publish('s', status('busy'));
      const controller = new AbortController();
      const first = await takeEvents(one.stream({ sessionId: 's', lastEventId: null, signal: controller.signal }), 3);
      const resumed = two.stream({ sessionId: 's', lastEventId: first[2]?.id, signal: controller.signal });
      one.publish('s', status('idle'));
      const rest = await takeEvents(resumed, 3);
      expect([...first, ...rest].map(({ data }) => data.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      controller.abort();
    });

    it('starts a subscriber on another instance at the running turn’s start, however far back it is', async () => {
      await using created = await createTestDatabase();
      await using servers = await instances(created.url, 2);
      const [one, two] = servers.events as [SessionEvents, SessionEvents];
      one.publish('s', { type: 'turn.started', turnId: 't0', messageId: 'm0', model: 'f/m' });
      one.publish('s', { type: 'turn.ended', turnId: 't0', reason: 'completed' });
      one.publish('s', { type: 'turn.started', turnId: 't1', messageId: 'm1', model: 'f/m' });
      for (let index = 0; index < 700; index += 1) one.publish('s', status('busy'));
      const controller = new AbortController();
      // Once the publishing instance shows the last one, all are stored.
      await takeEvents(one.stream({ sessionId: 's', lastEventId: null, signal: controller.signal }), 703);
      const fromStart = await takeEvents(
        two.stream({ sessionId: 's', lastEventId: null, fromTurnStart: true, signal: controller.signal }),
        701,
      );
      expect(fromStart[0]?.data).toMatchObject({ type: 'turn.started', turnId: 't1', seq: 3 });
      expect(fromStart.map(({ data }) => data.seq)).toEqual(Array.from({ length: 701 }, (_, index) => index + 3));
      controller.abort();
    });

    it('numbers on from the last stored event after a restart, with the same ids', async () => {
      await using created = await createTestDatabase();
      let lastId: string | undefined;
      {
        await using servers = await instances(created.url, 1);
        const [one] = servers.events as [SessionEvents];
        one.publish('s', status('busy'));
        one.publish('s', status('idle'));
        const controller = new AbortController();
        lastId = (await takeEvents(one.stream({ sessionId: 's', lastEventId: null, signal: controller.signal }), 2))[1]
          ?.id;
        controller.abort();
      }
      await using restarted = await instances(created.url, 1);
      const [again] = restarted.events as [SessionEvents];
      const controller = new AbortController();
      const resumed = again.stream({ sessionId: 's', lastEventId: lastId, signal: controller.signal });
      again.publish('s', status('busy'));
      const [next] = await takeEvents(resumed, 1);
      expect(next?.data).toMatchObject({ type: 'status', seq: 3 });
      expect(next?.id.split(':')[0]).toBe(lastId?.split(':')[0]);
      controller.abort();
    });

    it('refuses a number another instance stored first, and numbers on after the stored ones', async () => {
      await using created = await createTestDatabase();
      await using servers = await instances(created.url, 2);
      const [one, two] = servers.events as [SessionEvents, SessionEvents];
      one.publish('s', status('busy'));
      two.publish('s', status('busy'));
      // Both numbered their event 1 (each thinks it owns the session): one of them is stored.
      const controller = new AbortController();
      const [stored] = await takeEvents(
        one.stream({ sessionId: 's', lastEventId: null, signal: controller.signal }),
        1,
      );
      expect(stored?.data.seq).toBe(1);
      // The refused instance read the count again: its next event follows the stored ones.
      await waitFor(async () => {
        two.publish('s', status('idle'));
        const all = await takeEvents(
          // Generous: on a loaded machine the read of the stored events can take seconds.
          one.stream({ sessionId: 's', lastEventId: stored?.id, signal: AbortSignal.timeout(5_000) }),
          1,
        ).catch(() => []);
        return all.some(({ data }) => data.type === 'status' && data.status === 'idle');
      });
      controller.abort();
    });

    it('numbers again the events whose number another instance took: the running instance’s, and a rename made elsewhere', async () => {
      await using created = await createTestDatabase();
      const opened = await Promise.all([0, 1].map(() => openDatabase({ url: created.url, logger, maxConnections: 3 })));
      const [first, second] = opened as [Database, Database];
      // The first instance runs the session; the second only renames it.
      const one = createSessionEvents({
        storage: await openPostgresEventLog({ database: first, logger }),
        logger,
        runs: () => true,
      });
      const two = createSessionEvents({ storage: await openPostgresEventLog({ database: second, logger }), logger });
      try {
        // Both read the count (nothing yet): each numbers its next event 1, whichever is stored first.
        for (const events of [one, two]) {
          await takeEvents(
            events.stream({ sessionId: 's', lastEventId: null, fromNow: true, signal: AbortSignal.timeout(200) }),
            1,
          ).catch(() => []);
        }
        one.publish('s', { type: 'turn.started', turnId: 't1', messageId: 'm1', model: 'f/m' });
        two.publish('s', { type: 'session.renamed', name: 'renamed elsewhere' }, { standalone: true });
        const controller = new AbortController();
        const seen = await takeEvents(one.stream({ sessionId: 's', lastEventId: null, signal: controller.signal }), 2);
        controller.abort();
        expect(seen.map(({ data }) => data.seq)).toEqual([1, 2]);
        expect(seen.map(({ data }) => data.type).sort()).toEqual(['session.renamed', 'turn.started']);
        // Whichever is stored first, the running instance's turn event is kept.
        two.publish('s', { type: 'turn.ended', turnId: 't0', reason: 'aborted' });
        one.publish('s', { type: 'turn.ended', turnId: 't1', reason: 'completed' });
        const after = await takeEvents(
          one.stream({ sessionId: 's', lastEventId: seen[1]?.id, signal: AbortSignal.timeout(5_000) }),
          2,
        ).catch(() => []);
        expect(after.map(({ data }) => data.type === 'turn.ended' && data.turnId)).toContain('t1');
      } finally {
        await one.close();
        await two.close();
        for (const database of opened) await database.close();
      }
    });

    it('refuses the late events of a turn once another turn of the session started, and every event of the session after one of them', async () => {
      await using opened = await openTestDatabase();
      const log = await openPostgresEventLog({ database: opened.database, logger });
      try {
        await log.write(numbered('s', 1, [started('A'), delta('A', 'partial')]));
        // The session's next holder started its turn: what the first one sends now is refused.
        await log.write(numbered('s', 3, [status('busy'), started('B')]));
        const late = numbered('s', 5, [
          delta('A', 'late'),
          { type: 'error', turnId: 'A', code: 'conflict', message: 'cut off' },
          { type: 'turn.ended', turnId: 'A', reason: 'aborted' },
          status('idle'),
        ]);
        expect(await log.write(late)).toEqual([]);
        // The holder's events go on under those numbers.
        const going = numbered('s', 5, [
          delta('B', 'answer'),
          { type: 'turn.ended', turnId: 'B', reason: 'completed' },
        ]);
        expect(await log.write(going)).toEqual(going);
        // A turn started in the same batch is the turn its events are checked against.
        const next = numbered('s', 7, [started('C'), delta('C', 'on')]);
        expect(await log.write(next)).toEqual(next);
        // A turn that failed before it started (no turn.started of its own) still says so.
        const failed = numbered('s', 9, [
          { type: 'error', turnId: 'D', code: 'internal', message: 'the session could not be read' },
          { type: 'turn.ended', turnId: 'D', reason: 'error' },
        ]);
        expect(await log.write(failed)).toEqual(failed);
        const kept = await log.read('s', 0, 100);
        expect(kept.map((event) => [event.seq, event.type, 'turnId' in event ? event.turnId : ''])).toEqual([
          [1, 'turn.started', 'A'],
          [2, 'message.delta', 'A'],
          [3, 'status', ''],
          [4, 'turn.started', 'B'],
          [5, 'message.delta', 'B'],
          [6, 'turn.ended', 'B'],
          [7, 'turn.started', 'C'],
          [8, 'message.delta', 'C'],
          [9, 'error', 'D'],
          [10, 'turn.ended', 'D'],
        ]);
      } finally {
        await log.close();
      }
    });

    it('stores the events of a session only as the next ones: a stale count never puts events between another instance’s, nor leaves a hole', async () => {
      await using opened = await openTestDatabase();
      const log = await openPostgresEventLog({ database: opened.database, logger });
      try {
        await log.write(numbered('s', 1, [status('busy'), status('idle'), status('busy')]));
        // Numbered from 2 by an instance that saw one event: 2 and 3 are taken, 4 and 5 are not.
        const stale = numbered('s', 2, [status('idle'), status('busy'), status('idle'), status('busy')]);
        const fresh = numbered('t', 1, [status('busy')]);
        expect(await log.write([...stale, ...fresh])).toEqual(fresh);
        // Nor a batch past a hole: its instance's batch before it was refused.
        expect(await log.write(numbered('s', 6, [status('idle')]))).toEqual([]);
        expect((await log.read('s', 0, 100)).map((event) => event.seq)).toEqual([1, 2, 3]);
      } finally {
        await log.close();
      }
    });

    it('keeps events published while the database is down and stores them, in order, once it is back', async () => {
      await using cluster = await startPostgresCluster();
      const url = await cluster.createDatabase('molf');
      await using servers = await instances(url, 1);
      const [one] = servers.events as [SessionEvents];
      one.publish('s', status('busy'));
      const controller = new AbortController();
      const stream = one.stream({ sessionId: 's', lastEventId: null, signal: controller.signal });
      expect((await takeEvents(stream, 1)).map(({ data }) => data.seq)).toEqual([1]);
      await cluster.stop();
      one.publish('s', { type: 'turn.started', turnId: 't1', messageId: 'm1', model: 'f/m' });
      one.publish('s', status('idle'));
      await new Promise((resolveLater) => setTimeout(resolveLater, 500));
      await cluster.start();
      expect((await takeEvents(stream, 2)).map(({ data }) => [data.seq, data.type])).toEqual([
        [2, 'turn.started'],
        [3, 'status'],
      ]);
      controller.abort();
    });
  },
);

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((resolveLater) => setTimeout(resolveLater, 50));
  }
}
