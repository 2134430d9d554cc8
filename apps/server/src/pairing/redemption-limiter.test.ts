import { describe, expect, it } from 'vitest';
import { createMemoryLogger } from '../testing/memory-logger.ts';
import { createRedemptionLimiter, PAIRING_LIMITS } from './redemption-limiter.ts';

async function limiterWithClock() {
  let now = Date.parse('2026-05-01T10:00:00Z');
  const { logger, lines } = await createMemoryLogger();
  const limiter = createRedemptionLimiter({ now: () => now, logger });
  return {
    limiter,
    warnings: () => lines.filter((line) => line.level === 40),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('redemption limits', () => {
  it('has the documented numbers: 5 a minute per address for 5 minutes, 20 a minute in all', () => {
    expect(PAIRING_LIMITS.perAddress).toEqual({ failures: 5, windowMs: 60_000, lockoutMs: 300_000 });
    expect(PAIRING_LIMITS.global).toEqual({ failures: 20, windowMs: 60_000, pauseMs: 60_000 });
  });

  it('locks an address out for 5 minutes after 5 failures within a minute, and says so once', async () => {
    const { limiter, warnings, advance } = await limiterWithClock();
    for (let attempt = 0; attempt < 4; attempt += 1) {
      expect(limiter.check('127.0.0.1')).toEqual({ type: 'allow' });
      limiter.fail('127.0.0.1');
      advance(10_000);
    }
    limiter.fail('127.0.0.1');
    expect(limiter.check('127.0.0.1')).toEqual({ type: 'refuse', scope: 'address', retryAfterMs: 300_000 });
    expect(limiter.check('192.0.2.9')).toEqual({ type: 'allow' });
    advance(299_000);
    expect(limiter.check('127.0.0.1')).toEqual({ type: 'refuse', scope: 'address', retryAfterMs: 1_000 });
    advance(1_000);
    expect(limiter.check('127.0.0.1')).toEqual({ type: 'allow' });
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ remoteAddress: '127.0.0.1' });
  });

  it('does not lock out failures spread wider than a minute', async () => {
    const { limiter, advance } = await limiterWithClock();
    for (let attempt = 0; attempt < 10; attempt += 1) {
      limiter.fail('127.0.0.1');
      advance(15_001);
    }
    expect(limiter.check('127.0.0.1')).toEqual({ type: 'allow' });
  });

  it('pauses every redemption for a minute after 20 failures within a minute from many addresses', async () => {
    const { limiter, warnings, advance } = await limiterWithClock();
    for (let index = 0; index < 20; index += 1) {
      expect(limiter.check(`192.0.2.${index}`)).toEqual({ type: 'allow' });
      limiter.fail(`192.0.2.${index}`);
      advance(1_000);
    }
    expect(limiter.check('198.51.100.1')).toEqual({ type: 'refuse', scope: 'global', retryAfterMs: 59_000 });
    expect(warnings()).toHaveLength(1);
    advance(59_000);
    expect(limiter.check('198.51.100.1')).toEqual({ type: 'allow' });
  });

  it('forgets the least recently failed addresses beyond its bound', async () => {
    const { limiter } = await limiterWithClock();
    for (let attempt = 0; attempt < 4; attempt += 1) limiter.fail('203.0.113.1');
    for (let index = 0; index < PAIRING_LIMITS.maxAddresses; index += 1)
      limiter.fail(`10.${index >> 8}.${index & 255}.1`);
    // Remembered, this fifth failure within the minute would lock the address out (the flood has
    // paused pairing for everyone meanwhile, which is the refusal it gets instead).
    limiter.fail('203.0.113.1');
    expect(limiter.check('203.0.113.1')).toMatchObject({ scope: 'global' });
    // A recent address is remembered all the same.
    for (let attempt = 0; attempt < 5; attempt += 1) limiter.fail('203.0.113.2');
    expect(limiter.check('203.0.113.2')).toMatchObject({ scope: 'address' });
  });
});
