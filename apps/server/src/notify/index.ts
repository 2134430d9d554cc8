export { type LinkClaims, MAX_TOKEN_LENGTH } from './approval-link-token.ts';
export {
  APPROVAL_LINKS_PATH,
  type ApprovalLinkPair,
  type ApprovalLinks,
  createApprovalLinks,
  type LinkAnswer,
  type LinkInspection,
  toLinkAnswerer,
} from './approval-links.ts';
export { type ApprovalPlace, toApprovalWhat, toAskReasons, toSubjectText } from './describe-approval.ts';
export { loadLinkKey } from './load-link-key.ts';
export {
  DEFAULT_LINK_TTL_MINUTES,
  type NotifyOptions,
  type NotifySettings,
  NotifySettingsSchema,
  type NotifyTarget,
} from './notify-settings.ts';
export { type ApprovalNotifier, startApprovalNotifier } from './start-approval-notifier.ts';
export { startCronNotifier } from './start-cron-notifier.ts';
