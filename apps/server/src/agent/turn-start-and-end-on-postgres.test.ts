import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { FakeRequest, FakeTurn } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { WAKE_CHANNEL } from '../cluster/postgres-session-leases.ts';
import { openDatabase } from '../database/index.ts';
import { openPostgresEventLog } from '../sessions/postgres-event-log.ts';
import { createPostgresSessionStore } from '../sessions/postgres-session-store.ts';
import { follow, newSession, type Stack, startStack } from '../testing/agent-stack.ts';
import { createMemoryLogger } from '../testing/memory-logger.ts';
import { createTestDatabase, postgresUnavailable, withDatabase } from '../testing/test-database.ts';
import { waitFor } from '../testing/test-link.ts';

const unavailable = postgresUnavailable();

/** Storing a session's idle status takes seconds: longer than the sweep for sessions that need an instance. */
const SLOW_IDLE = `
  create function slow_idle() returns trigger language plpgsql as
    $$ begin if old.status = 'busy' and new.status = 'idle' then perform pg_sleep(5); end if; return new; end $$;
  create trigger slow_idle before update of status on sessions for each row execute function slow_idle();`;

const slowIdleStatus = (url: string) => withDatabase(url, (database) => database.sql.unsafe(SLOW_IDLE));

/** Queues a prompt as another server does (without its wake). */
const queueElsewhere = (url: string, sessionId: string, text: string) =>
  withDatabase(url, (database) =>
    createPostgresSessionStore({ database }).enqueue(sessionId, {
      messageId: randomUUID(),
      text,
      at: new Date().toISOString(),
    }),
  );

/** Leaves the session as a server that died mid-turn does: the prompt stored, the session busy, no lease. */
const cutOffTurn = (url: string, sessionId: string, prompt: { text: string; cronJobId?: string }) =>
  withDatabase(url, async (database) => {
    const store = createPostgresSessionStore({ database });
    await store.append(sessionId, { id: randomUUID(), at: new Date().toISOString(), role: 'user', ...prompt });
    await store.setStatus(sessionId, 'busy');
  });

/** Waits until the session is idle in the database and nobody holds its lease. */
function settled(url: string, sessionId: string): Promise<void> {
  return withDatabase(url, (database) =>
    waitFor(
      async () => {
        const rows = await database.sql<{ status: string; leased: boolean }[]>`
          select status, exists (select 1 from session_leases l where l.session_id = s.session_id) as leased
          from sessions s where session_id = ${sessionId}`;
        return rows[0]?.status === 'idle' && rows[0].leased === false;
      },
      { what: 'the session idle with its lease released' },
    ),
  );
}

/** An answer that streams for a second or so: prompts sent meanwhile find its turn running. */
const SLOW_TURN: FakeTurn = { text: ['a ', 'long ', 'answer'], chunkDelayMs: 500 };

/** Sends 'the running prompt' and waits until its turn asks the model (the answer is SLOW_TURN). */
async function startRunningTurn(stack: Stack, sessionId: string): Promise<void> {
  await stack.client.rpc.sessions.prompt.mutate({ sessionId, text: 'the running prompt' });
  await waitFor(() => stack.llm.requests.length === 1, { what: 'the first turn asking the model' });
}

/** A server on its own database whose idle status writes are slow, and one turn that ended there. */
async function oneEndedTurn(turn: FakeTurn) {
  const created = await createTestDatabase();
  let stack: Stack | undefined;
  try {
    stack = await startStack({ databaseUrl: created.url, turns: [turn] });
    await slowIdleStatus(created.url);
    const session = await newSession(stack);
    const watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'once only' });
    await watch.turnEnded();
    const opened = stack;
    return {
      url: created.url,
      stack: opened,
      session,
      watch,
      async [Symbol.asyncDispose]() {
        watch[Symbol.dispose]();
        await opened[Symbol.asyncDispose]();
        await created[Symbol.asyncDispose]();
      },
    };
  } catch (error) {
    await stack?.[Symbol.asyncDispose]();
    await created[Symbol.asyncDispose]();
    throw error;
  }
}

/** The last user message a model request carried, as JSON. */
const lastUserText = (request: FakeRequest) =>
  JSON.stringify(request.messages.findLast((message) => message.role === 'user'));

const ENDINGS: Array<{ ending: string; turn: FakeTurn }> = [
  { ending: 'answered', turn: { text: 'the one answer' } },
  { ending: 'failed at the provider', turn: { error: { status: 400, message: 'refused' } } },
];

describe.skipIf(unavailable !== undefined)(
  `the start and end of a turn on PostgreSQL${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    for (const { ending, turn } of ENDINGS) {
      it(`does not run a turn ${ending} again while its idle status is being stored (the sweep for cut-off turns)`, async () => {
        await using ended = await oneEndedTurn(turn);
        const { url, stack, session, watch } = ended;
        await settled(url, session.sessionId);
        // A turn taken for a cut-off one would have asked the model again by now (the sweep runs every
        // 2 to 2.5 s, and the status took 5 s to store); one more sweep after the session settled.
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        expect(stack.llm.requests).toHaveLength(1);
        expect(watch.events.filter((event) => event.type === 'turn.started')).toHaveLength(1);
      });

      it(`does not run a turn ${ending} again when the server is woken for the session as it ends`, async () => {
        await using ended = await oneEndedTurn(turn);
        const { url, stack, session, watch } = ended;
        // As another server does when a prompt it queued may need this one.
        await stack.link.server.leases?.wake(session.sessionId);
        await settled(url, session.sessionId);
        expect(stack.llm.requests).toHaveLength(1);
        expect(watch.events.filter((event) => event.type === 'turn.started')).toHaveLength(1);
        expect((await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId })).session.status).toBe(
          'idle',
        );
      });
    }

    it('says nothing was aborted when asked while a session is handed over, and goes on to settle it', async () => {
      await using ended = await oneEndedTurn({ text: 'the one answer' });
      const { url, stack, session } = ended;
      // The idle status takes 5 s to store: the session is being handed over now.
      expect(await stack.client.rpc.sessions.abort.mutate({ sessionId: session.sessionId })).toEqual({
        aborted: false,
      });
      await settled(url, session.sessionId);
      expect(stack.llm.requests).toHaveLength(1);
    });

    it('stores the idle status again when the database refused it, before it lets the session go', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({
        databaseUrl: created.url,
        turns: [{ error: { status: 400, message: 'refused' } }],
      });
      // The first two idle writes fail (a sequence counts outside the failing transactions).
      await withDatabase(created.url, (database) =>
        database.sql.unsafe(`
          create sequence idle_writes;
          create function failing_idle() returns trigger language plpgsql as
            $$ begin
              if old.status = 'busy' and new.status = 'idle' and nextval('idle_writes') <= 2 then
                raise exception 'could not extend file: No space left on device';
              end if;
              return new;
            end $$;
          create trigger failing_idle before update of status on sessions for each row execute function failing_idle();`),
      );
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'once only' });
      await watch.turnEnded();
      await settled(created.url, session.sessionId);
      // Let go stored busy, the turn (its prompt unanswered) would be run again by the next sweep.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(stack.llm.requests).toHaveLength(1);
      expect(watch.events.filter((event) => event.type === 'turn.started')).toHaveLength(1);
    });

    it('runs a prompt once when the server is woken for the session as its turn starts', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({ databaseUrl: created.url, turns: [{ text: 'the one answer' }] });
      // Storing the busy status takes a while: the turn waits for it before it runs.
      await withDatabase(created.url, (database) =>
        database.sql.unsafe(`
          create function slow_busy() returns trigger language plpgsql as
            $$ begin if old.status = 'idle' and new.status = 'busy' then perform pg_sleep(2); end if; return new; end $$;
          create trigger slow_busy before update of status on sessions for each row execute function slow_busy();`),
      );
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      const prompted = stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'once only' });
      await waitFor(() => watch.events.some((event) => event.type === 'status' && event.status === 'busy'), {
        what: 'the session busy',
      });
      // As another server does when a prompt may need this one; the prompt is still in the queue table.
      await stack.link.server.leases?.wake(session.sessionId);
      expect(await prompted).toMatchObject({ queued: false });
      await watch.turnEnded();
      await settled(created.url, session.sessionId);
      expect(stack.llm.requests).toHaveLength(1);
      expect(watch.events.filter((event) => event.type === 'turn.started')).toHaveLength(1);
    });

    it('runs a turn cut off by its server’s end first, then the prompts queued behind it', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({
        databaseUrl: created.url,
        turns: [{ text: 'the cut-off one, answered' }, { text: 'the queued one, answered' }],
      });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      // As a server that died mid-turn leaves it, and a prompt another server queued behind it.
      await cutOffTurn(created.url, session.sessionId, { text: 'the cut-off prompt' });
      await queueElsewhere(created.url, session.sessionId, 'the queued prompt');
      await stack.link.server.leases?.wake(session.sessionId);
      await watch.turnEnded(2);
      await settled(created.url, session.sessionId);
      expect(stack.llm.requests.map(lastUserText)).toEqual([
        expect.stringContaining('the cut-off prompt'),
        expect.stringContaining('the queued prompt'),
      ]);
    });

    it('drops a queued prompt the database refuses to store, with one error, and goes on with the next', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({
        databaseUrl: created.url,
        turns: [SLOW_TURN, { text: 'the next one, answered' }],
      });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      await startRunningTurn(stack, session.sessionId);
      // The database refuses one prompt every time it is stored (as a constraint it breaks would).
      await withDatabase(created.url, (database) =>
        database.sql.unsafe(`
          create function refuse_prompt() returns trigger language plpgsql as
            $$ begin if new.body like '%refuse me%' then raise exception 'refused by a check'; end if; return new; end $$;
          create trigger refuse_prompt before insert on session_messages for each row execute function refuse_prompt();`),
      );
      for (const text of ['refuse me', 'the next one']) {
        await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text });
      }
      await watch.turnEnded(2);
      await settled(created.url, session.sessionId);
      expect(stack.llm.requests.map(lastUserText)).toEqual([
        expect.stringContaining('the running prompt'),
        expect.stringContaining('the next one'),
      ]);
      const refused = watch.events.filter(
        (event) => event.type === 'error' && event.message.includes('could not be stored'),
      );
      expect(refused).toHaveLength(1);
      const queued = await withDatabase(created.url, (database) =>
        createPostgresSessionStore({ database }).queued(session.sessionId),
      );
      expect(queued).toEqual([]);
    });

    it('keeps a queued prompt whose storing lost the connection, and runs it once the database answers', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({
        databaseUrl: created.url,
        turns: [SLOW_TURN, { text: 'answered after all' }],
      });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      await startRunningTurn(stack, session.sessionId);
      // The first time the prompt is stored, the database ends the connection that stores it.
      await withDatabase(created.url, (database) =>
        database.sql.unsafe(`
          create sequence lost_links;
          create function lose_link() returns trigger language plpgsql as
            $$ begin
              if new.body like '%lose the link%' and nextval('lost_links') = 1 then
                perform pg_terminate_backend(pg_backend_pid());
              end if;
              return new;
            end $$;
          create trigger lose_link before insert on session_messages for each row execute function lose_link();`),
      );
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'lose the link' });
      await watch.turnEnded(2);
      expect(stack.llm.requests.map(lastUserText)).toEqual([
        expect.stringContaining('the running prompt'),
        expect.stringContaining('lose the link'),
      ]);
      const failed = watch.events.filter((event) => event.type === 'error');
      expect(failed).toEqual([expect.objectContaining({ message: expect.stringContaining('it waits in the queue') })]);
    });

    it('runs a prompt again at most twice when storing its answer drops the connection every time, then ends its turn in the error', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({
        databaseUrl: created.url,
        turns: [{ text: 'lost' }, { text: 'lost again' }, { text: 'and again' }, { text: 'never asked' }],
      });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      await withDatabase(created.url, (database) =>
        database.sql.unsafe(`
          create function lose_every_answer() returns trigger language plpgsql as
            $$ begin
              if new.body like '%"role":"assistant"%' then perform pg_terminate_backend(pg_backend_pid()); end if;
              return new;
            end $$;
          create trigger lose_every_answer before insert on session_messages
            for each row execute function lose_every_answer();`),
      );
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'answer me' });
      await watch.turnEnded();
      await settled(created.url, session.sessionId);
      expect(stack.llm.requests).toHaveLength(3);
      expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'error' });
      const handedOver = watch.events.filter(
        (event) => event.type === 'error' && event.message.includes('runs again once the database answers'),
      );
      expect(handedOver).toHaveLength(2);
    });

    it('runs a prompt another server queued before one sent to the holder, in that order', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({
        databaseUrl: created.url,
        turns: [SLOW_TURN, { text: 'second' }, { text: 'third' }],
      });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      await startRunningTurn(stack, session.sessionId);
      // Queued through another server, whose wake has not come yet.
      await queueElsewhere(created.url, session.sessionId, 'queued elsewhere first');
      expect(
        await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'sent here after' }),
      ).toMatchObject({ queued: true });
      await watch.turnEnded(3);
      expect(stack.llm.requests.map(lastUserText)).toEqual([
        expect.stringContaining('the running prompt'),
        expect.stringContaining('queued elsewhere first'),
        expect.stringContaining('sent here after'),
      ]);
    });

    it('never runs a prompt an abort dropped, though its removal from the queue table is slow', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({
        databaseUrl: created.url,
        turns: [SLOW_TURN, { text: 'not asked' }, { text: 'after' }],
      });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      await startRunningTurn(stack, session.sessionId);
      for (const text of ['dropped one', 'dropped two']) {
        expect(await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text })).toMatchObject({
          queued: true,
        });
      }
      await withDatabase(created.url, (database) =>
        database.sql.unsafe(`
          create function slow_dequeue() returns trigger language plpgsql as
            $$ begin perform pg_sleep(2); return old; end $$;
          create trigger slow_dequeue before delete on session_queue for each row execute function slow_dequeue();`),
      );
      expect(await stack.client.rpc.sessions.abort.mutate({ sessionId: session.sessionId })).toEqual({ aborted: true });
      await watch.turnEnded();
      await settled(created.url, session.sessionId);
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'a prompt after' });
      await watch.turnEnded(2);
      expect(stack.llm.requests.map(lastUserText)).toEqual([
        expect.stringContaining('the running prompt'),
        expect.stringContaining('a prompt after'),
      ]);
    });

    it('runs a prompt queued for the session by another server as its turn ends, once', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({
        databaseUrl: created.url,
        turns: [{ text: 'first' }, { text: 'second' }],
      });
      await slowIdleStatus(created.url);
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'the first' });
      await watch.turnEnded();
      // Another server stores the prompt in the queue and wakes the holder.
      await queueElsewhere(created.url, session.sessionId, 'the late one');
      await stack.link.server.leases?.wake(session.sessionId);
      await watch.turnEnded(2);
      await settled(created.url, session.sessionId);
      expect(stack.llm.requests).toHaveLength(2);
      expect(watch.events.filter((event) => event.type === 'turn.started')).toHaveLength(2);
    });

    it('wakes only the holder when another server holds the session, not itself again and again', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({ databaseUrl: created.url, turns: [{ text: 'run once it was free' }] });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      const listener = await openDatabase({ url: created.url, logger: createSilentLogger() });
      await using _closing = { [Symbol.asyncDispose]: () => listener.close() };
      const wakes: string[] = [];
      const listening = await listener.sql.listen(WAKE_CHANNEL, (payload) => wakes.push(payload));
      // Another server runs a turn of the session (it holds the lease), though the worker is here now.
      await withDatabase(
        created.url,
        (database) => database.sql`
          insert into session_leases (session_id, instance_id, expires_at)
          values (${session.sessionId}, 'elsewhere', now() + interval '1 minute')`,
      );
      const sent = await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'next' });
      expect(sent.queued).toBe(true);
      await waitFor(() => wakes.length > 0, { what: 'a wake' });
      // A wake to every server would come back to this one, which would claim, fail and wake again.
      await new Promise((resolveLater) => setTimeout(resolveLater, 1_000));
      expect(wakes).toEqual([`${session.sessionId} elsewhere`]);
      await listening.unlisten();
      // The holder is gone: its lease goes, and the prompt, kept in the queue, runs here.
      await withDatabase(created.url, (database) => database.sql`delete from session_leases`);
      await watch.turnEnded();
      expect(stack.llm.requests).toHaveLength(1);
    });

    it('gives the lease back when what it read under the lease cannot be used, so that it is not held for nothing', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({ databaseUrl: created.url, turns: [{ text: 'unused' }] });
      const session = await newSession(stack);
      // A prompt waits, but the queue cannot be read under the lease (its table lost a column).
      await queueElsewhere(created.url, session.sessionId, 'never read');
      await withDatabase(
        created.url,
        (database) => database.sql`alter table session_queue rename column body to body_gone`,
      );
      const leased = () =>
        withDatabase(created.url, async (database) => {
          const rows = await database.sql`select 1 from session_leases where session_id = ${session.sessionId}`;
          return rows.length > 0;
        });
      await stack.link.server.leases?.wake(session.sessionId);
      // Taken and let go again (the sweep tries every few seconds): never held for good.
      const seen: boolean[] = [];
      const until = Date.now() + 3_000;
      while (Date.now() < until) {
        seen.push(await leased());
        await new Promise((resolveLater) => setTimeout(resolveLater, 100));
      }
      // Held for good, every look after the first take would find it held.
      expect(seen.filter((held) => held).length).toBeLessThan(seen.length / 2);
      expect(stack.llm.requests).toHaveLength(0);
    });

    it('ends the open turn of a session whose server stored its answer but not its end: followers see the end, the prompt is not run again', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({ databaseUrl: created.url, turns: [{ text: 'never asked' }] });
      const session = await newSession(stack);
      // As a server leaves it that stored the answer, then lost the database (or died) before the
      // turn's end and the idle status: its turn.started stored, no turn.ended, the session busy.
      await cutOffTurn(created.url, session.sessionId, { text: 'the answered prompt' });
      await withDatabase(created.url, async (database) => {
        await createPostgresSessionStore({ database }).append(session.sessionId, {
          id: randomUUID(),
          at: new Date().toISOString(),
          role: 'assistant',
          text: 'the stored answer',
          toolCalls: [],
          model: 'fake/m',
        });
        const log = await openPostgresEventLog({ database, logger: createSilentLogger() });
        await log.write([
          {
            type: 'turn.started',
            turnId: 'the-cut-off-turn',
            messageId: 'm',
            model: 'fake/m',
            seq: 1,
            sessionId: session.sessionId,
            at: new Date().toISOString(),
          },
        ]);
        await log.close();
      });
      using watch = follow(stack.client, session.sessionId);
      await stack.link.server.leases?.wake(session.sessionId);
      await watch.turnEnded();
      expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({
        turnId: 'the-cut-off-turn',
        reason: 'completed',
      });
      await settled(created.url, session.sessionId);
      expect(stack.llm.requests).toHaveLength(0);
    });

    it('drops a damaged queued prompt, logging what it held, and runs the prompts queued after it', async () => {
      await using created = await createTestDatabase();
      const { logger, lines } = await createMemoryLogger();
      await using stack = await startStack({ databaseUrl: created.url, logger, turns: [{ text: 'answered' }] });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      // Torn JSON, and JSON that is no prompt: neither can run, and neither may stop the session.
      await withDatabase(
        created.url,
        (database) => database.sql`
          insert into session_queue (session_id, message_id, body)
          values (${session.sessionId}, 'torn', '{"messageId": "torn", "te'),
                 (${session.sessionId}, 'not-a-prompt', '{"messageId": 42}')`,
      );
      await queueElsewhere(created.url, session.sessionId, 'the good one');
      await stack.link.server.leases?.wake(session.sessionId);
      await watch.turnEnded();
      await settled(created.url, session.sessionId);
      expect(stack.llm.requests.map(lastUserText)).toEqual([expect.stringContaining('the good one')]);
      const queued = await withDatabase(created.url, (database) =>
        createPostgresSessionStore({ database }).queued(session.sessionId),
      );
      expect(queued).toEqual([]);
      const dropped = lines.filter((line) => line.msg === 'dropped a damaged queued prompt: it cannot run');
      expect(dropped.map((line) => [line.messageId, line.body])).toEqual([
        ['torn', '{"messageId": "torn", "te'],
        ['not-a-prompt', '{"messageId": 42}'],
      ]);
    });

    it('keeps a cron run’s policy when it resumes a run cut off by its server’s end: its ask is denied, not left waiting', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({
        databaseUrl: created.url,
        turns: [
          { toolCalls: [{ id: 'call_1', name: 'shell_exec', arguments: { command: 'echo resumed' } }] },
          { text: 'noted' },
        ],
      });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      const job = await stack.client.rpc.cron.add.mutate({
        workerId: stack.link.worker.workerId,
        schedule: { every: '1h' },
        prompt: 'check the build',
        session: session.sessionId,
        onAsk: 'deny',
      });
      // As a server that died during the job's run leaves it.
      await cutOffTurn(created.url, session.sessionId, { text: 'check the build', cronJobId: job.jobId });
      await stack.link.server.leases?.wake(session.sessionId);
      // Without its policy the ask would wait for a person nobody told.
      await waitFor(() => watch.types().includes('turn.ended') || stack.link.server.gate.pending().length > 0, {
        what: 'the resumed run to end or ask',
      });
      expect(stack.link.server.gate.pending()).toEqual([]);
      await watch.turnEnded();
      const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
      const denied = messages.find((message) => message.role === 'tool');
      expect(denied).toMatchObject({ errorKind: 'permission_denied' });
      expect(`${denied?.role === 'tool' ? denied.error : ''}`).toContain('nobody is watching');
    });
  },
);
