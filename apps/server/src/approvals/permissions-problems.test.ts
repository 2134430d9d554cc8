import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import type { ApprovalEvent, PermissionsProblem } from '@molf/protocol';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import { startTestLink, TEST_CLIENT_TOKEN, TEST_WORKER_TOKEN, waitFor } from '../testing/test-link.ts';

type Link = Awaited<ReturnType<typeof startTestLink>>;

async function clientOf(link: Link): Promise<MolfClient> {
  const client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN });
  await client.ready();
  return client;
}

/** The file as a person's editor saves it: straight to disk, not through `permissions.write`. */
async function saveByHand(link: Link, text: string): Promise<void> {
  const path = link.server.permissions.pathOf(link.worker.workerId);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

function followProblems(client: MolfClient, workerId: string) {
  const events: ApprovalEvent[] = [];
  const subscription = client.rpc.approvals.events.subscribe({ workerId }, { onData: (event) => events.push(event) });
  const problems = () => events.flatMap((event) => (event.type === 'permissions.invalid' ? [event.problem] : []));
  return {
    events,
    problems,
    waitForProblem: (message: string) =>
      waitFor(() => problems().some((problem) => problem.message === message), { what: `the problem "${message}"` }),
    [Symbol.dispose]: () => subscription.unsubscribe(),
  };
}

async function listedProblem(client: MolfClient, workerId: string): Promise<PermissionsProblem | undefined> {
  const workers = await client.rpc.workers.list.query();
  return workers.find((worker) => worker.workerId === workerId)?.permissionsProblem;
}

const MISSING_COMMA = '{\n  "*": "ask"\n  "read_file": "allow"\n}';

describe('a broken permissions file in sight of the clients', () => {
  it('is reported as soon as its worker connects, before any tool call, with line, column and a sentence', async () => {
    await using link = await startTestLink();
    const { workerId } = link.worker;
    // The rules in force while the worker was there (the seeded defaults) stay in force after.
    await link.server.permissions.load(workerId);
    await link.worker.close();
    await saveByHand(link, MISSING_COMMA);
    const again = await createWorker({ serverUrl: link.server.url, token: TEST_WORKER_TOKEN, workdir: link.workdir });
    try {
      await again.registered;
      await using client = await clientOf(link);
      using follow = followProblems(client, workerId);
      await follow.waitForProblem('a comma is missing between two entries');
      const expected = {
        workerId,
        file: link.server.permissions.pathOf(workerId),
        line: 3,
        column: 3,
        message: 'a comma is missing between two entries',
        fallback: 'last_good_rules',
      };
      expect(follow.problems()).toEqual([expected]);
      expect(await listedProblem(client, workerId)).toEqual(expected);
      expect((await client.rpc.permissions.show.query({ workerId })).problem).toEqual(expected);
    } finally {
      await again.close();
    }
  });

  it('reaches a subscribed client when a person breaks the file and again when they fix it, while the worker is online', async () => {
    await using link = await startTestLink();
    const { workerId } = link.worker;
    await using client = await clientOf(link);
    using follow = followProblems(client, workerId);
    expect(await listedProblem(client, workerId)).toBeUndefined();

    await saveByHand(link, MISSING_COMMA);
    await follow.waitForProblem('a comma is missing between two entries');
    expect(await listedProblem(client, workerId)).toMatchObject({ line: 3, column: 3 });

    const schemaProblem =
      'the rules for "shell_exec" must be one action ("allow", "deny", "ask") or an object of pattern → action, such as { "git status": "allow", "*": "ask" }; not an array';
    await saveByHand(link, '{\n  "*": "ask",\n  "shell_exec": ["git *"]\n}');
    await follow.waitForProblem(schemaProblem);
    expect(await listedProblem(client, workerId)).toMatchObject({ line: 3, column: 17, message: schemaProblem });

    await saveByHand(link, '{\n  "*": "ask",\n  "shell_exec": { "git *": "allow" }\n}');
    await waitFor(() => follow.events.some((event) => event.type === 'permissions.valid'), {
      what: 'permissions.valid',
    });
    expect(follow.events.at(-1)).toEqual({ type: 'permissions.valid', workerId });
    expect(await listedProblem(client, workerId)).toBeUndefined();
  });
});
