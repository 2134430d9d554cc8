import { describe, expect, it } from 'vitest';
import { APPROVAL_KEY_PAUSE_MS, createApprovalKeyGuard } from './approval-key-guard.ts';

function clock() {
  let time = 10_000;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

describe('the approval key guard', () => {
  it('lets an approval that appears to an idle keyboard take the first key', () => {
    const time = clock();
    const guard = createApprovalKeyGuard(time.now);
    guard.noteKey();
    time.advance(5_000);
    guard.arm();
    expect(guard.accepts()).toBe(true);
  });

  it('refuses the keys of someone typing when it appears, until they pause', () => {
    const time = clock();
    const guard = createApprovalKeyGuard(time.now);
    guard.noteKey();
    time.advance(50);
    guard.arm();
    // "y" of "your", 80 ms later: meant for the prompt.
    time.advance(80);
    expect(guard.accepts()).toBe(false);
    // More typing keeps it shut.
    time.advance(APPROVAL_KEY_PAUSE_MS - 10);
    expect(guard.accepts()).toBe(false);
    // A pause, then a key: the person has seen it.
    time.advance(APPROVAL_KEY_PAUSE_MS);
    expect(guard.accepts()).toBe(true);
  });

  it('does not let a second quick press answer the next approval too', () => {
    const time = clock();
    const guard = createApprovalKeyGuard(time.now);
    // "y" answered the first approval; the next one appears 30 ms later and "y" is pressed again.
    guard.noteKey();
    time.advance(30);
    guard.arm();
    time.advance(40);
    expect(guard.accepts()).toBe(false);
  });

  it('lets the approval a sent prompt leads to take the first key', () => {
    const time = clock();
    const guard = createApprovalKeyGuard(time.now);
    guard.noteKey();
    guard.sent();
    time.advance(100);
    guard.arm();
    expect(guard.accepts()).toBe(true);
  });
});
