export { streamCronEvents } from './cron-event-stream.ts';
export { type CronJobStore, openCronJobStore } from './cron-job-store.ts';
export {
  type CronClock,
  type CronFire,
  type CronFireResult,
  type CronScheduler,
  startCronScheduler,
} from './cron-scheduler.ts';
export { createCronFire, cronUnattendedAsk } from './fire-cron-job.ts';
export { setHeartbeat } from './heartbeat.ts';
