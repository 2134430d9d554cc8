export { toAddressKey } from './address-key.ts';
export {
  formatWait,
  MAX_LIVE_PAIRING_CODES,
  openPairingCodeStore,
  PAIRING_CODE_TTL_MS,
  PAIRING_CODES_FILE,
  type PairingCodeStore,
  type Redemption,
} from './pairing-code-store.ts';
export { formatPairingCode, safeParsePairingCode } from './pairing-code-text.ts';
export { createRedemptionLimiter, PAIRING_LIMITS, type RedemptionLimiter } from './redemption-limiter.ts';
