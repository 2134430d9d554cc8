import { createSilentLogger } from '@molf/logging';
import type { SessionEvent, WorkerId } from '@molf/protocol';
import { type FakeTurn, startFakeLlm } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { createModelResolver } from '../providers/resolve-model.ts';
import { openFileSessionStore } from '../sessions/file-session-store.ts';
import { createSessionEvents } from '../sessions/session-events.ts';
import { follow, newSession, startStack } from '../testing/agent-stack.ts';
import { createTempDir, waitFor } from '../testing/test-link.ts';
import { createSessionTitler, TITLE_INSTRUCTIONS } from './session-titler.ts';

/** Matches the title model's request (its instructions), not a turn's. */
const TITLE_REQUEST = 'Reply with the title only';

/** A titler over a real store, the session events and the fake LLM as the `fake/…` provider. */
async function startTitler(options: { turns?: FakeTurn[]; titleModel?: string; timeoutMs?: number } = {}) {
  const dir = await createTempDir();
  const llm = await startFakeLlm({ turns: options.turns ?? [] });
  const logger = createSilentLogger();
  const store = await openFileSessionStore({ dataDir: dir.path, logger });
  const events = createSessionEvents();
  const titler = createSessionTitler({
    store,
    events,
    logger,
    models: createModelResolver({ custom: { fake: { baseURL: llm.baseURL } } }),
    titleModel: options.titleModel,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  const renames: SessionEvent[] = [];
  const newUntitled = async () => {
    const session = await store.create({ workerId: 'w1' as WorkerId });
    events.observe(session.sessionId, (event) => {
      if (event.type === 'session.renamed') renames.push(event);
    });
    return session;
  };
  return {
    llm,
    store,
    titler,
    renames,
    newUntitled,
    async [Symbol.asyncDispose]() {
      try {
        await titler.close();
        await events.close();
        await store.close();
        await llm.close();
      } finally {
        await dir[Symbol.asyncDispose]();
      }
    },
  };
}

describe('session titles', () => {
  it("names an untitled session by its first prompt's first words and publishes session.renamed", async () => {
    await using setup = await startTitler();
    const session = await setup.newUntitled();
    expect(session).toMatchObject({ untitled: true, name: expect.stringMatching(/^Session \d{4}-/) });

    await setup.titler.titleFrom({
      sessionId: session.sessionId,
      prompt: 'Fix the flaky parser test\n\nIt fails on CI',
    });

    const titled = await setup.store.get(session.sessionId);
    expect(titled?.name).toBe('Fix the flaky parser test');
    expect(titled?.untitled).toBeUndefined();
    expect(setup.renames).toMatchObject([{ type: 'session.renamed', name: 'Fix the flaky parser test' }]);
  });

  it('keeps a name given at creation, asking no model', async () => {
    await using setup = await startTitler({ titleModel: 'fake/titler', turns: [{ text: 'Never asked' }] });
    const session = await setup.store.create({ workerId: 'w1' as WorkerId, name: 'My session' });
    await setup.titler.titleFrom({ sessionId: session.sessionId, prompt: 'something else' });
    expect((await setup.store.get(session.sessionId))?.name).toBe('My session');
    expect(setup.llm.requests).toHaveLength(0);
  });

  it('names the session by the title model, in the background, when one is configured', async () => {
    await using setup = await startTitler({
      titleModel: 'fake/titler',
      turns: [{ match: TITLE_REQUEST, text: '"Flaky parser test fix."' }],
    });
    const session = await setup.newUntitled();
    await setup.titler.titleFrom({ sessionId: session.sessionId, prompt: 'the parser test fails one run in ten' });

    expect((await setup.store.get(session.sessionId))?.name).toBe('Flaky parser test fix');
    expect(setup.renames).toMatchObject([{ name: 'Flaky parser test fix' }]);
    const [request] = setup.llm.requests;
    expect(request?.model).toBe('titler');
    expect(request?.messages).toEqual([
      { role: 'system', content: TITLE_INSTRUCTIONS },
      { role: 'user', content: 'the parser test fails one run in ten' },
    ]);
  });

  it('keeps the name a person gives while the title model writes its title', async () => {
    await using setup = await startTitler({
      titleModel: 'fake/titler',
      turns: [{ match: TITLE_REQUEST, text: 'Model title' }],
    });
    const session = await setup.newUntitled();
    const titled = setup.titler.titleFrom({ sessionId: session.sessionId, prompt: 'rename things' });
    // The model answers over HTTP; the person's name is stored before (its change is synchronous).
    await setup.store.update(session.sessionId, { name: "The person's name" });
    await titled;

    expect(setup.llm.requests).toHaveLength(1);
    expect((await setup.store.get(session.sessionId))?.name).toBe("The person's name");
    expect(setup.renames).toEqual([]);
  });

  it.each([
    { failure: 'answers with an HTTP error', turn: { match: TITLE_REQUEST, error: { status: 500 } } },
    { failure: 'answers nothing in time', turn: { match: TITLE_REQUEST, stallAfterChunks: 0 } },
    { failure: 'answers an empty title', turn: { match: TITLE_REQUEST, text: '  ""  ' } },
  ])('falls back to the first words when the title model $failure', async ({ turn }) => {
    await using setup = await startTitler({ titleModel: 'fake/titler', turns: [turn], timeoutMs: 500 });
    const session = await setup.newUntitled();
    await setup.titler.titleFrom({ sessionId: session.sessionId, prompt: 'Explain the cron scheduler' });
    expect(setup.llm.requests).toHaveLength(1);
    expect((await setup.store.get(session.sessionId))?.name).toBe('Explain the cron scheduler');
  });

  it('stops a title call in flight on close, leaving the session untitled', async () => {
    await using setup = await startTitler({
      titleModel: 'fake/titler',
      turns: [{ match: TITLE_REQUEST, stallAfterChunks: 0 }],
    });
    const session = await setup.newUntitled();
    const titled = setup.titler.titleFrom({ sessionId: session.sessionId, prompt: 'never titled' });
    await waitFor(() => setup.llm.requests.length === 1, { what: 'the title request' });
    await setup.titler.close();
    await titled;
    expect(await setup.store.get(session.sessionId)).toMatchObject({ untitled: true });
  });

  it('resolves quietly when the session was deleted before its title', async () => {
    await using setup = await startTitler();
    const session = await setup.newUntitled();
    await setup.store.delete(session.sessionId);
    await expect(setup.titler.titleFrom({ sessionId: session.sessionId, prompt: 'gone' })).resolves.toBeUndefined();
  });
});

describe('session titles through the server', () => {
  it('titles a session at its first prompt only, with the title model of the server config', async () => {
    await using stack = await startStack({
      titleModel: 'fake/titler',
      turns: [{ match: TITLE_REQUEST, text: 'Greeting the agent' }, { text: 'Hello!' }, { text: 'Again.' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'Say hello' });
    await waitFor(() => watch.types().includes('session.renamed'), { what: 'session.renamed' });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
    expect(watch.events.find((event) => event.type === 'session.renamed')).toMatchObject({
      name: 'Greeting the agent',
    });

    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'Say it again' });
    await watch.turnEnded(2);
    expect(watch.types().filter((type) => type === 'session.renamed')).toHaveLength(1);
    expect(
      stack.llm.requests.filter((request) => JSON.stringify(request.messages).includes(TITLE_REQUEST)),
    ).toHaveLength(1);
    expect((await stack.client.rpc.sessions.info.query({ sessionId: session.sessionId })).name).toBe(
      'Greeting the agent',
    );
  });

  it('ends the turn while the title model has not answered', async () => {
    await using stack = await startStack({
      titleModel: 'fake/titler',
      turns: [{ match: TITLE_REQUEST, stallAfterChunks: 0 }, { text: 'Hello!' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'Say hello' });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
    expect(stack.llm.requests.some((request) => JSON.stringify(request.messages).includes(TITLE_REQUEST))).toBe(true);
    expect(await stack.client.rpc.sessions.info.query({ sessionId: session.sessionId })).toMatchObject({
      untitled: true,
    });
  });

  it("publishes a person's rename to the session's followers, and the first prompt keeps it", async () => {
    await using stack = await startStack({ turns: [{ text: 'ok' }] });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    const renamed = await stack.client.rpc.sessions.rename.mutate({ sessionId: session.sessionId, name: 'Mine' });
    expect(renamed.untitled).toBeUndefined();
    await waitFor(() => watch.types().includes('session.renamed'), { what: 'session.renamed' });
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'Do something' });
    await watch.turnEnded();
    expect(watch.events.filter((event) => event.type === 'session.renamed')).toMatchObject([{ name: 'Mine' }]);
    expect((await stack.client.rpc.sessions.info.query({ sessionId: session.sessionId })).name).toBe('Mine');
  });
});
