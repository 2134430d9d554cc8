import { createServer } from 'node:net';
import { createMolfClient } from '@molf/client/node';
import type { SessionEvent } from '@molf/protocol';
import { type FakeTurn, startFakeLlm } from '@molf/testkit';
import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { createModelResolver } from '../providers/resolve-model.ts';
import { startTestLink, TEST_CLIENT_TOKEN, waitFor } from '../testing/test-link.ts';
import { describeProviderError, redactProviderText } from './provider-errors.ts';
import { runModelStep } from './run-model-step.ts';

const KEY = 'sk-fake-0123456789abcdef';

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What the session would show for one model call to `baseURL`, made by the real provider code. */
async function failedCall(baseURL: string, options: { headers?: Record<string, string> } = {}): Promise<string> {
  const models = createModelResolver({
    custom: { fake: { baseURL, apiKey: KEY, ...(options.headers === undefined ? {} : { headers: options.headers }) } },
    env: {},
  });
  const outcome = await runModelStep({
    model: models.resolve({ prompt: 'fake/test-model' }).model,
    system: 'system',
    messages: [{ role: 'user', content: 'hello' }],
    tools: {},
    signal: new AbortController().signal,
    streamIdleTimeoutMs: 60_000,
    onTextDelta: () => {},
  });
  if (outcome.end.type !== 'failed') throw new Error(`the call did not fail: ${outcome.end.type}`);
  return describeProviderError(outcome.end.error, { provider: 'fake', secrets: models.secrets('fake/test-model') });
}

describe('provider errors', () => {
  it.each<[number, string, FakeTurn[]]>([
    [401, '401 Unauthorized', [{ error: { status: 401, message: `Incorrect API key provided: ${KEY}` } }]],
    [
      429,
      '429 Too Many Requests',
      [
        { error: { status: 429, message: 'Rate limit reached' } },
        { error: { status: 429, message: 'Rate limit reached' } },
      ],
    ],
    [
      500,
      '500 Internal Server Error',
      [{ error: { status: 500, message: 'upstream broke' } }, { error: { status: 500, message: 'upstream broke' } }],
    ],
  ])('name the status %i, the endpoint and the provider’s message, never the key', async (_status, shown, turns) => {
    await using llm = await startFakeLlm({ turns });
    const described = await failedCall(llm.baseURL);
    const message = turns[0]?.error?.message?.replace(KEY, '[redacted]');
    expect(described).toMatch(new RegExp(`^provider fake answered ${shown} at ${llm.baseURL}/chat/completions: `));
    expect(described).toContain(message);
    expect(described).not.toContain(KEY);
    // The key did travel: the redaction is what keeps it out.
    expect(llm.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('say how many attempts a retried failure took', async () => {
    await using llm = await startFakeLlm({
      turns: [{ error: { status: 503, message: 'overloaded' } }, { error: { status: 503, message: 'overloaded' } }],
    });
    expect(await failedCall(llm.baseURL)).toBe(
      `provider fake answered 503 Service Unavailable at ${llm.baseURL}/chat/completions: overloaded (2 attempts)`,
    );
  });

  it('keep a custom header’s value and an Authorization echoed in the body out', async () => {
    await using llm = await startFakeLlm({
      turns: [
        {
          error: {
            status: 403,
            message: 'forbidden for X-Team-Secret: team-secret-42, Authorization: Bearer abcdefgh1234',
          },
        },
      ],
    });
    const described = await failedCall(llm.baseURL, { headers: { 'X-Team-Secret': 'team-secret-42' } });
    expect(described).toBe(
      `provider fake answered 403 Forbidden at ${llm.baseURL}/chat/completions: ` +
        'forbidden for X-Team-Secret: [redacted], Authorization: [redacted]',
    );
  });

  it('name the endpoint when nothing listens there', async () => {
    const baseURL = `http://127.0.0.1:${await closedPort()}/v1`;
    expect(await failedCall(baseURL)).toBe(
      `provider fake could not be reached at ${baseURL}/chat/completions: connection refused (nothing listens there) (2 attempts)`,
    );
  });

  it('hide a key given in the URL’s query and its user info', () => {
    const error = new APICallError({
      message: 'Forbidden',
      url: `https://user:${KEY}@generativelanguage.example.com/v1beta/models/m:streamGenerateContent?alt=sse&key=${KEY}`,
      requestBodyValues: {},
      statusCode: 403,
      responseBody: JSON.stringify({ error: { code: 403, message: 'API key not valid', status: 'PERMISSION_DENIED' } }),
    });
    const described = describeProviderError(error, { provider: 'google' });
    expect(described).toBe(
      'provider google answered 403 Forbidden at https://[redacted]@generativelanguage.example.com/v1beta/models/' +
        'm:streamGenerateContent?alt=sse&key=[redacted]: API key not valid',
    );
  });

  it('redact credential-shaped text even without knowing the key', () => {
    expect(
      redactProviderText('x-api-key: abc123456 api_key=zzz999 Authorization: Basic dXNlcjpw ?key=q1w2e3&alt=sse', []),
    ).toBe('x-api-key: [redacted] api_key=[redacted] Authorization: [redacted] ?key=[redacted]&alt=sse');
  });

  it('reach the session as its error event through the agent loop', async () => {
    await using llm = await startFakeLlm({
      turns: [{ error: { status: 401, message: `Incorrect API key provided: ${KEY}` } }],
    });
    await using link = await startTestLink({
      server: { models: { defaultModel: 'fake/test-model', custom: { fake: { baseURL: llm.baseURL, apiKey: KEY } } } },
    });
    const client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN });
    try {
      const session = await client.rpc.sessions.create.mutate({ workerId: link.worker.workerId });
      const events: SessionEvent[] = [];
      const subscription = client.rpc.sessions.events.subscribe(
        { sessionId: session.sessionId },
        { onData: (envelope) => events.push(envelope.data) },
      );
      try {
        await client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'hello' });
        await waitFor(() => events.some((event) => event.type === 'turn.ended'), { what: 'the turn to end' });
      } finally {
        subscription.unsubscribe();
      }
      expect(events.find((event) => event.type === 'error')).toEqual(
        expect.objectContaining({
          code: 'provider_error',
          message: `provider fake answered 401 Unauthorized at ${llm.baseURL}/chat/completions: Incorrect API key provided: [redacted]`,
        }),
      );
    } finally {
      await client.close();
    }
  });
});
