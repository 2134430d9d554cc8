import type { ToolCallId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createWorkerOutbox } from './worker-outbox.ts';

function callMessage(id: string) {
  return { type: 'call' as const, job: { toolCallId: id as ToolCallId, toolName: 'echo', args: {}, timeoutMs: 1 } };
}

describe('worker outbox', () => {
  it('reads on after a sequence number, skipping finished entries', () => {
    let seq = 0;
    const outbox = createWorkerOutbox(() => ++seq);
    const entries = ['a', 'b', 'c', 'd'].map((id) => outbox.append(id as ToolCallId, callMessage(id)));
    outbox.finish(entries[2] as (typeof entries)[number]);
    expect([...outbox.entriesAfter(1)].map((entry) => entry.toolCallId)).toEqual(['b', 'd']);
    expect([...outbox.entriesAfter(4)]).toEqual([]);
  });

  it('keeps a suspended reader in place when finished entries are compacted away', () => {
    let seq = 0;
    const outbox = createWorkerOutbox(() => ++seq);
    const entries = Array.from({ length: 200 }, (_, index) =>
      outbox.append(`c${index}` as ToolCallId, callMessage(`c${index}`)),
    );
    const reader = outbox.entriesAfter(0);
    expect(reader.next().value?.toolCallId).toBe('c0');
    // Finishing most entries triggers a compaction while the reader is between items.
    for (const entry of entries.slice(0, 150)) outbox.finish(entry);
    outbox.append('late' as ToolCallId, callMessage('late'));
    const rest = [...reader].map((entry) => entry.toolCallId);
    expect(rest).toEqual([...entries.slice(150).map((entry) => entry.toolCallId), 'late']);
  });

  it('wakes a waiting reader on append, and on abort', async () => {
    let seq = 0;
    const outbox = createWorkerOutbox(() => ++seq);
    const controller = new AbortController();
    const woken = outbox.nextAppend(controller.signal);
    outbox.append('x' as ToolCallId, callMessage('x'));
    await woken;
    const aborted = outbox.nextAppend(controller.signal);
    controller.abort();
    await aborted;
  });
});
