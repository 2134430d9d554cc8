/**
 * Database benchmark: what keeping the state in PostgreSQL costs, on a throw-away cluster of this
 * machine's PostgreSQL with durable commits (fsync on, synchronous_commit on), as a deployment runs it.
 *
 *   append  — storing one message in a session of 10 messages and in one of 10,000 (2,000 with
 *             --quick), samples taken in turn from the two: the file store (appended and synced)
 *             against the PostgreSQL store (one statement, committed). p50 and p99. Target:
 *             PostgreSQL p99 ≤ 2 ms, and flat (O(1)).
 *   events  — an event published on one instance, until a subscriber on another instance (its own
 *             pool, as another server) has it: stored in the batch of its tick, announced by NOTIFY,
 *             read back. p50 and p99 with one session, and with many publishing at once.
 *
 * Usage: node scripts/bench/database-bench.ts [--quick] [--json]
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createSilentLogger } from '@molf/logging';
import type { SessionEvent, SessionMessage, WorkerId } from '@molf/protocol';
import {
  createPostgresSessionStore,
  createSessionEvents,
  openDatabase,
  openFileSessionStore,
  openPostgresEventLog,
  type SessionStore,
} from '@molf/server';
import { findPostgresPrograms, startPostgresCluster } from '@molf/testkit';
import { BENCH_OPTIONS } from './bench-flags.ts';
import { percentile } from './bench-stats.ts';

const { values: flags } = parseArgs({ options: BENCH_OPTIONS, strict: true });
const LARGE_SESSION = flags.quick ? 2_000 : 10_000;
const SAMPLES = flags.quick ? 200 : 1_000;
const EVENT_SAMPLES = flags.quick ? 200 : 1_000;
const BUSY_SESSIONS = flags.quick ? 50 : 200;
const logger = createSilentLogger();
const progress = (text: string) => process.stderr.write(`${text}\n`);

function message(index: number): SessionMessage {
  return {
    id: randomUUID(),
    at: new Date().toISOString(),
    role: 'assistant',
    text: `answer ${index}: ${'lorem ipsum dolor sit amet '.repeat(8)}`,
    toolCalls: [],
    model: 'fake/m',
  };
}

const figures = (times: number[]) => ({ p50Ms: percentile(times, 0.5), p99Ms: percentile(times, 0.99) });

/**
 * Append times in a session of 10 messages and in one of LARGE_SESSION, the samples taken in turn from
 * one and the other. Taken one session after the other, the first set lands in the seconds after the
 * LARGE_SESSION loading appends, while the disk still flushes them: that window's p99 was twice the
 * p99 of the same session measured a second later. Interleaved, both sizes see the same moments.
 */
async function appendTimes(store: SessionStore) {
  const small = await store.create({ workerId: randomUUID() as WorkerId });
  const large = await store.create({ workerId: randomUUID() as WorkerId });
  for (let index = 0; index < 10; index += 1) await store.append(small.sessionId, message(index));
  for (let index = 0; index < LARGE_SESSION; index += 1) await store.append(large.sessionId, message(index));
  const at10: number[] = [];
  const atLarge: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample += 1) {
    for (const [sessionId, times] of [
      [small.sessionId, at10],
      [large.sessionId, atLarge],
    ] as const) {
      const started = performance.now();
      await store.append(sessionId, message(sample));
      times.push(performance.now() - started);
    }
  }
  return {
    at10: figures(at10),
    atLarge: figures(atLarge),
    flatRatio: percentile(atLarge, 0.5) / percentile(at10, 0.5),
  };
}

async function eventLatency(url: string, sessions: number) {
  const open = async () => {
    const database = await openDatabase({ url, logger, maxConnections: 4 });
    const events = createSessionEvents({ storage: await openPostgresEventLog({ database, logger }), logger });
    return { database, events };
  };
  const publisher = await open();
  const subscriber = await open();
  const ids = Array.from({ length: sessions }, () => randomUUID());
  const sentAt = new Map<string, number>();
  const times: number[] = [];
  const controller = new AbortController();
  const perSession = Math.ceil(EVENT_SAMPLES / sessions);
  const readers = ids.map(async (sessionId) => {
    const stream = subscriber.events.stream({ sessionId, lastEventId: null, fromNow: true, signal: controller.signal });
    let seen = 0;
    for await (const [, event] of stream as AsyncGenerator<[string, SessionEvent]>) {
      const started = sentAt.get(`${sessionId}:${event.seq}`);
      if (started !== undefined) times.push(performance.now() - started);
      seen += 1;
      if (seen >= perSession) break;
    }
  });
  // The subscriptions start on their first read.
  await new Promise((resolveLater) => setTimeout(resolveLater, 300));
  for (let round = 0; round < perSession; round += 1) {
    for (const sessionId of ids) {
      const event = publisher.events.publish(sessionId, { type: 'status', status: round % 2 === 0 ? 'busy' : 'idle' });
      if (event !== undefined) sentAt.set(`${sessionId}:${event.seq}`, performance.now());
    }
    // A tick between rounds, as a model's chunks come.
    await new Promise((resolveLater) => setTimeout(resolveLater, 5));
  }
  await Promise.all(readers);
  controller.abort();
  for (const { events, database } of [publisher, subscriber]) {
    await events.close();
    await database.close();
  }
  return { sessions, ...figures(times) };
}

async function main() {
  if (findPostgresPrograms() === undefined) {
    process.stdout.write('database: skipped (PostgreSQL is not installed: apt-get install postgresql)\n');
    return;
  }
  progress('starting a durable PostgreSQL cluster…');
  await using cluster = await startPostgresCluster({ durable: true });
  const url = await cluster.createDatabase('molf_bench');
  const root = await mkdtemp(join(tmpdir(), 'molf-database-bench-'));
  try {
    progress(`appending to the file store (sessions of 10 and ${LARGE_SESSION} messages)…`);
    const files = await openFileSessionStore({ dataDir: root, logger });
    const fileAppend = await appendTimes(files);
    await files.close();
    progress('appending to the PostgreSQL store…');
    const database = await openDatabase({ url, logger });
    const postgresAppend = await appendTimes(createPostgresSessionStore({ database }));
    await database.close();
    progress('event latency across instances…');
    const oneSession = await eventLatency(url, 1);
    const busy = await eventLatency(url, BUSY_SESSIONS);
    const result = {
      append: { largeSession: LARGE_SESSION, files: fileAppend, postgres: postgresAppend },
      events: { oneSession, busy },
      targets: { postgresAppendP99Ms: 2 },
    };
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    const ms = (value: number) => `${value.toFixed(2)} ms`;
    process.stdout.write(
      [
        'database (PostgreSQL, durable commits)',
        `  append one message, files:      p50 ${ms(fileAppend.at10.p50Ms)} / p99 ${ms(fileAppend.at10.p99Ms)} (10 messages); p50 ${ms(fileAppend.atLarge.p50Ms)} / p99 ${ms(fileAppend.atLarge.p99Ms)} (${LARGE_SESSION})`,
        `  append one message, PostgreSQL: p50 ${ms(postgresAppend.at10.p50Ms)} / p99 ${ms(postgresAppend.at10.p99Ms)} (10 messages); p50 ${ms(postgresAppend.atLarge.p50Ms)} / p99 ${ms(postgresAppend.atLarge.p99Ms)} (${LARGE_SESSION}); flat ratio ${postgresAppend.flatRatio.toFixed(2)} (target p99 ≤ 2 ms)`,
        `  event to a subscriber on another instance: p50 ${ms(oneSession.p50Ms)} / p99 ${ms(oneSession.p99Ms)} (1 session); p50 ${ms(busy.p50Ms)} / p99 ${ms(busy.p99Ms)} (${busy.sessions} sessions at once)`,
        '',
      ].join('\n'),
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
