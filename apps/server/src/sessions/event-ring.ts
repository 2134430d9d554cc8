import type { SessionEvent } from '@molf/protocol';

/**
 * The newest events of one session, at most `capacity`, addressed by sequence number. Adding is
 * O(1) whatever is kept (an array trimmed at the front would move every kept event each time).
 */
export type EventRing = {
  push(event: SessionEvent): void;
  /** The kept event with this sequence number, if it is still kept. */
  at(seq: number): SessionEvent | undefined;
  /** The oldest kept sequence number; `nextSeq` when none is kept. */
  firstSeq(nextSeq: number): number;
  size(): number;
  clear(): void;
};

export function createEventRing(capacity: number): EventRing {
  let slots: Array<SessionEvent | undefined> = [];
  let first = 0;
  let count = 0;
  return {
    push(event) {
      if (slots.length < capacity) {
        slots.push(event);
        count += 1;
        return;
      }
      slots[first] = event;
      first = (first + 1) % capacity;
    },
    at(seq) {
      if (count === 0) return undefined;
      const oldest = (slots[first] as SessionEvent).seq;
      const offset = seq - oldest;
      if (offset < 0 || offset >= count) return undefined;
      return slots[(first + offset) % slots.length];
    },
    firstSeq: (nextSeq) => (count === 0 ? nextSeq : (slots[first] as SessionEvent).seq),
    size: () => count,
    clear() {
      slots = [];
      first = 0;
      count = 0;
    },
  };
}
