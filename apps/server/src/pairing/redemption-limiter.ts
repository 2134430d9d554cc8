import type { Logger } from '@molf/logging';

/**
 * How many wrong pairing codes are tolerated. There is no exemption of any kind: loopback counts
 * like any address and `X-Forwarded-For` is never read, so a reverse proxy on the same host gives
 * all its clients one address's budget instead of opening a hole (the reference implementation
 * exempted loopback, which left such a proxy with only the global limit).
 */
export const PAIRING_LIMITS = {
  /** One address (an IPv6 /64): 5 failed attempts within 1 minute lock it out for 5 minutes. */
  perAddress: { failures: 5, windowMs: 60_000, lockoutMs: 5 * 60_000 },
  /** All addresses together: 20 failed attempts within 1 minute stop every redemption for 1 minute. */
  global: { failures: 20, windowMs: 60_000, pauseMs: 60_000 },
  /**
   * Addresses remembered at most; the least recently failed are forgotten first. The global limit
   * already lets at most 20 addresses fail a minute, so this is a bound that should never bite.
   */
  maxAddresses: 1_024,
} as const;

/** Whether an attempt may check its code now, and if not, whose limit refused it and for how long. */
export type RedemptionCheck = { type: 'allow' } | { type: 'refuse'; scope: 'address' | 'global'; retryAfterMs: number };

/**
 * Counts failed redemptions (a wrong, expired, used or malformed code) per address and in all.
 * `check` before looking at a code: a refused attempt is not looked at and not counted.
 */
export type RedemptionLimiter = {
  check(addressKey: string): RedemptionCheck;
  fail(addressKey: string): void;
};

type AddressEntry = { failures: number[]; lockedUntil: number };

export function createRedemptionLimiter(options: {
  /** Default `Date.now`. */
  now?: () => number;
  logger: Logger;
}): RedemptionLimiter {
  const now = options.now ?? Date.now;
  const { perAddress, global, maxAddresses } = PAIRING_LIMITS;
  /** In order of last failure: the first is the one to forget. */
  const addresses = new Map<string, AddressEntry>();
  let globalFailures: number[] = [];
  let pausedUntil = 0;

  function forgetOld(at: number): void {
    for (const [key, entry] of addresses) {
      const recent = entry.failures.some((time) => time > at - perAddress.windowMs);
      if (!recent && entry.lockedUntil <= at) addresses.delete(key);
    }
    while (addresses.size > maxAddresses) {
      const oldest = addresses.keys().next().value;
      if (oldest === undefined) break;
      addresses.delete(oldest);
    }
  }

  return {
    check(addressKey) {
      const at = now();
      // The address's own lockout first: it is the longer wait, and the one its peer caused.
      const entry = addresses.get(addressKey);
      if (entry !== undefined && entry.lockedUntil > at) {
        return { type: 'refuse', scope: 'address', retryAfterMs: entry.lockedUntil - at };
      }
      if (pausedUntil > at) return { type: 'refuse', scope: 'global', retryAfterMs: pausedUntil - at };
      return { type: 'allow' };
    },

    fail(addressKey) {
      const at = now();
      const entry = addresses.get(addressKey) ?? { failures: [], lockedUntil: 0 };
      addresses.delete(addressKey);
      entry.failures = [...entry.failures.filter((time) => time > at - perAddress.windowMs), at];
      if (entry.failures.length >= perAddress.failures) {
        entry.failures = [];
        entry.lockedUntil = at + perAddress.lockoutMs;
        options.logger.warn(
          { remoteAddress: addressKey, lockoutMs: perAddress.lockoutMs },
          `pairing: ${perAddress.failures} wrong codes within a minute from this address; it is locked out`,
        );
      }
      addresses.set(addressKey, entry);

      globalFailures = [...globalFailures.filter((time) => time > at - global.windowMs), at];
      if (globalFailures.length >= global.failures) {
        globalFailures = [];
        pausedUntil = at + global.pauseMs;
        options.logger.warn(
          { pauseMs: global.pauseMs },
          `pairing: ${global.failures} wrong codes within a minute from all addresses; every redemption is refused for a while`,
        );
      }
      forgetOld(at);
    },
  };
}
