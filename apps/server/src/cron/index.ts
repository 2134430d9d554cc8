export { streamCronEvents } from './cron-event-stream.ts';
export { type CronJobStore, openCronJobStore } from './cron-job-store.ts';
export {
  type CronClock,
  type CronFire,
  type CronFireResult,
  type CronScheduler,
  startCronScheduler,
  systemClock,
} from './cron-scheduler.ts';
export { createCronFire, describeRunner } from './fire-cron-job.ts';
export { HEARTBEAT_MARKER, setHeartbeat } from './heartbeat.ts';
