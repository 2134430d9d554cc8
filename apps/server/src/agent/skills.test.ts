import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { follow, newSession, type Stack, startStack, toolMessages } from '../testing/agent-stack.ts';
import { waitFor } from '../testing/test-link.ts';

const DEPLOY_SKILL = [
  '---',
  'name: deploy',
  'description: How to deploy this project to staging',
  'allowed-tools: [shell_exec, read_file]',
  '---',
  'Run `make deploy ENV=staging`, then check scripts/verify.sh.',
].join('\n');

async function writeSkill(stack: Stack, folder: string, text: string, extra: Record<string, string> = {}) {
  const dir = join(stack.link.workdir, '.agents', 'skills', folder);
  await mkdir(dir, { recursive: true });
  for (const [name, content] of Object.entries(extra)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), content);
  }
  await writeFile(join(dir, 'SKILL.md'), text);
}

function serverSkills(stack: Stack): string[] {
  const workerId = stack.link.worker.workerId as WorkerId;
  return stack.link.server.registry.registration(workerId)?.catalog?.skills.map((skill) => skill.name) ?? [];
}

describe('skills through the fake LLM and a real worker', () => {
  it('offers the skill tool listing the skills; a call asks, and once approved returns the content and the files beside it', async () => {
    await using stack = await startStack({
      permissions: JSON.stringify({ '*': 'ask', read_file: 'allow' }),
      turns: [{ toolCalls: [{ name: 'skill', arguments: { name: 'deploy' } }] }, { text: 'deploying' }],
    });
    await writeSkill(stack, 'deploy', DEPLOY_SKILL, { 'scripts/verify.sh': 'echo ok\n' });
    await waitFor(() => serverSkills(stack).includes('deploy'), { what: 'the skill to reach the server' });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'ship it' });
    await waitFor(() => watch.events.some((event) => event.type === 'approval.requested'), {
      what: 'the skill to ask',
    });
    const asked = watch.events.find((event) => event.type === 'approval.requested');
    if (asked?.type !== 'approval.requested') throw new Error('no approval');
    expect(asked.approval).toMatchObject({ tool: 'skill', subjects: [{ kind: 'name', label: 'deploy' }] });
    await stack.client.rpc.approvals.approve.mutate({
      sessionId: session.sessionId,
      approvalId: asked.approval.approvalId,
      scope: 'once',
    });
    await watch.turnEnded();

    const offered = stack.llm.requests[0]?.tools.find((entry) => entry.function.name === 'skill');
    expect(offered?.function.description).toContain(
      '<skill name="deploy">How to deploy this project to staging</skill>',
    );
    expect(offered?.function.parameters).toMatchObject({ properties: { name: { enum: ['deploy'] } } });
    const [result] = await toolMessages(stack, session.sessionId, 'skill');
    expect(result?.role === 'tool' && result.output).toContain('Run `make deploy ENV=staging`');
    expect(result?.role === 'tool' && result.output).toContain('.agents/skills/deploy/scripts/verify.sh');
    expect(result?.role === 'tool' && result.output).toContain('This skill expects these tools: shell_exec, read_file');
    expect(result?.role === 'tool' && result.output).not.toContain('description:');
  });

  it('refuses a skill whose SKILL.md leads to a file the read_file rules deny, and leaves such files out of its list', async () => {
    await using stack = await startStack({
      permissions: JSON.stringify({ '*': 'ask', read_file: { '*': 'allow', '*secret*': 'deny' }, skill: 'allow' }),
      turns: [
        { toolCalls: [{ id: 's1', name: 'skill', arguments: { name: 'notes' } }] },
        { toolCalls: [{ id: 's2', name: 'skill', arguments: { name: 'deploy' } }] },
        { text: 'ok' },
      ],
    });
    await mkdir(join(stack.link.workdir, 'config'), { recursive: true });
    await writeFile(
      join(stack.link.workdir, 'config', 'secret-notes.md'),
      '---\ndescription: Notes\n---\nDB_PASSWORD=hunter2\n',
    );
    await mkdir(join(stack.link.workdir, '.agents', 'skills', 'notes'), { recursive: true });
    await symlink(
      join(stack.link.workdir, 'config', 'secret-notes.md'),
      join(stack.link.workdir, '.agents', 'skills', 'notes', 'SKILL.md'),
    );
    await writeSkill(stack, 'deploy', DEPLOY_SKILL, { 'secret-token.txt': 'TOKEN=abc\n', 'run.sh': 'make\n' });
    await waitFor(() => serverSkills(stack).includes('notes') && serverSkills(stack).includes('deploy'), {
      what: 'the skills to reach the server',
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'read notes' });
    await watch.turnEnded();
    const results = await toolMessages(stack, session.sessionId, 'skill');
    const notes = results.find((message) => message.role === 'tool' && message.toolCallId === 's1');
    expect(notes).toMatchObject({ errorKind: 'permission_denied' });
    expect(JSON.stringify(notes)).not.toContain('hunter2');
    const deploy = results.find((message) => message.role === 'tool' && message.toolCallId === 's2');
    expect(deploy?.role === 'tool' && deploy.output).toContain('.agents/skills/deploy/run.sh');
    expect(deploy?.role === 'tool' && deploy.output).not.toContain('secret-token.txt');
  });

  it('does not offer the skill tool to a worker without skills', async () => {
    await using stack = await startStack({ turns: [{ text: 'hi' }] });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'hello' });
    await watch.turnEnded();
    expect(stack.llm.requests[0]?.tools.map((entry) => entry.function.name)).not.toContain('skill');
  });

  it('offers a skill added while a turn runs from the next model step after it reached the server', async () => {
    await using stack = await startStack({
      permissions: JSON.stringify({ '*': 'ask', shell_exec: 'allow', skill: 'allow' }),
      turns: [
        {
          toolCalls: [
            {
              name: 'shell_exec',
              arguments: {
                command: [
                  'mkdir -p .agents/skills/release',
                  `printf -- '---\\ndescription: Cut a release\\n---\\nTag it.\\n' > .agents/skills/release/SKILL.md`,
                  'while [ ! -f go-on ]; do sleep 0.05; done',
                ].join(' && '),
              },
            },
          ],
        },
        { toolCalls: [{ name: 'skill', arguments: { name: 'release' } }] },
        { text: 'released' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'add a skill' });
    await waitFor(() => serverSkills(stack).includes('release'), { what: 'the new skill to reach the server' });
    await writeFile(join(stack.link.workdir, 'go-on'), '');
    await watch.turnEnded();
    const tools = stack.llm.requests.map((request) => request.tools.map((entry) => entry.function.name));
    expect(tools[0]).not.toContain('skill');
    expect(tools[1]).toContain('skill');
    const [result] = await toolMessages(stack, session.sessionId, 'skill');
    expect(result?.role === 'tool' && result.output).toContain('Tag it.');
  });

  it('lets a rule allow a skill by name, so it loads without asking', async () => {
    await using stack = await startStack({
      permissions: JSON.stringify({ '*': 'ask', skill: { deploy: 'allow' } }),
      turns: [{ toolCalls: [{ name: 'skill', arguments: { name: 'deploy' } }] }, { text: 'ok' }],
    });
    await writeSkill(stack, 'deploy', DEPLOY_SKILL);
    await waitFor(() => serverSkills(stack).includes('deploy'), { what: 'the skill to reach the server' });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'go' });
    await watch.turnEnded();
    expect(watch.types()).not.toContain('approval.requested');
    const [result] = await toolMessages(stack, session.sessionId, 'skill');
    expect(result?.role === 'tool' && result.error).toBeFalsy();
  });

  it('stores a skill the person loads with the prompt as a skill result the model sees first', async () => {
    await using stack = await startStack({ turns: [{ text: 'following the skill' }] });
    await writeSkill(stack, 'deploy', DEPLOY_SKILL);
    await waitFor(() => serverSkills(stack).includes('deploy'), { what: 'the skill to reach the server' });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({
      sessionId: session.sessionId,
      text: 'deploy now',
      skills: ['deploy'],
    });
    await watch.turnEnded();
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(messages[1]).toMatchObject({ toolCalls: [{ toolName: 'skill', args: { name: 'deploy' } }] });
    expect(messages[2]).toMatchObject({ toolName: 'skill', output: expect.stringContaining('make deploy') });
    const sent = JSON.stringify(stack.llm.requests[0]?.messages);
    expect(sent).toContain('make deploy ENV=staging');
    expect(watch.types()).toContain('tool-call.ended');

    await expect(
      stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'x', skills: ['nope'] }),
    ).rejects.toThrow(/no skill named "nope" on this session's worker; its skills: deploy/);
  });
});
