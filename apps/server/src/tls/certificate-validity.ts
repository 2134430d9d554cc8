/** How many days before its end a certificate is said to be expiring. */
export const EXPIRY_WARNING_DAYS = 30;

const DAY_MS = 86_400_000;

/** Where a certificate stands in its life at a given moment. */
export type CertificateValidity =
  | { type: 'valid'; daysLeft: number }
  | { type: 'expiring'; daysLeft: number }
  | { type: 'expired' }
  | { type: 'not_yet_valid' };

/** `expiring` when {@link EXPIRY_WARNING_DAYS} or fewer days are left; `daysLeft` is rounded down. */
export function toCertificateValidity(options: { validFrom: Date; validTo: Date; now: number }): CertificateValidity {
  const { validFrom, validTo, now } = options;
  if (now < validFrom.getTime()) return { type: 'not_yet_valid' };
  if (now > validTo.getTime()) return { type: 'expired' };
  const daysLeft = Math.floor((validTo.getTime() - now) / DAY_MS);
  return daysLeft <= EXPIRY_WARNING_DAYS ? { type: 'expiring', daysLeft } : { type: 'valid', daysLeft };
}
