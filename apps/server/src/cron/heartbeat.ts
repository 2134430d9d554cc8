import type { CronCreator, CronHeartbeatInput, CronJob, SessionEvent, WorkerId } from '@molf/protocol';
import type { SessionEvents, SessionStore } from '../sessions/index.ts';
import type { CronScheduler } from './cron-scheduler.ts';

/** What a heartbeat's answer begins with when it reports something. */
export const HEARTBEAT_MARKER = 'HEARTBEAT_ALERT:';
/** What it answers when all is well. */
export const HEARTBEAT_OK = 'HEARTBEAT_OK';
export const DEFAULT_HEARTBEAT_EVERY = '30m';
/** A turn that never ends (queued, then dropped by an abort) stops being watched after this. */
const WATCH_LIMIT_MS = 6 * 3_600_000;

/**
 * Whether a HEARTBEAT.md has nothing to check: blank once its comments and headings are taken
 * away (a template that is all headings runs no model call).
 */
export function isEmptyChecklist(text: string): boolean {
  return (
    text
      .replace(/<!--[\s\S]*?-->/g, '')
      .split('\n')
      .filter((line) => !/^\s*#/.test(line))
      .join('')
      .trim() === ''
  );
}

/** The prompt of one heartbeat run: the checklist, and how to answer so that it stays silent when all is well. */
export function heartbeatPrompt(checklist: string): string {
  return [
    'This is a scheduled heartbeat. Go through the checklist below (from HEARTBEAT.md in this project).',
    `If nothing needs the user's attention, answer exactly ${HEARTBEAT_OK} and nothing else.`,
    `If something does, begin your answer with ${HEARTBEAT_MARKER} and say briefly what needs attention.`,
    '',
    '<checklist path="HEARTBEAT.md">',
    checklist.trim(),
    '</checklist>',
  ].join('\n');
}

/**
 * Watches the turn that answers the run's prompt (`messageId`, chosen before the prompt is sent,
 * so that its start cannot be missed), and calls `report` with what its last answer reports when it
 * begins with the marker. Returns a function that stops watching (the prompt was refused).
 */
export function watchHeartbeatAnswer(
  events: SessionEvents,
  options: { sessionId: string; messageId: string; report: (text: string) => void },
): () => void {
  let turnId: string | undefined;
  let answer = '';
  const stop = events.observe(options.sessionId, (event: SessionEvent) => {
    if (turnId === undefined) {
      if (event.type === 'turn.started' && event.messageId === options.messageId) turnId = event.turnId;
      return;
    }
    if (event.type === 'message.completed' && event.turnId === turnId && event.message.role === 'assistant') {
      if (event.message.text.trim() !== '') answer = event.message.text.trim();
    } else if (event.type === 'turn.ended' && event.turnId === turnId) {
      finish();
      if (answer.startsWith(HEARTBEAT_MARKER)) options.report(answer.slice(HEARTBEAT_MARKER.length).trim());
    }
  });
  const timer = setTimeout(() => finish(), WATCH_LIMIT_MS);
  timer.unref();
  function finish() {
    clearTimeout(timer);
    stop();
  }
  return finish;
}

/**
 * Turns a worker's heartbeat on (one job per worker, every `every`, into a "Heartbeat" session of
 * its own) or off (the job removed). Turned on again, the job's interval changes.
 */
export function setHeartbeat(
  services: { scheduler: CronScheduler; sessions: SessionStore },
  input: CronHeartbeatInput,
  createdBy: CronCreator,
): Promise<CronJob | undefined> {
  // One change of a worker's heartbeat at a time: two "on" at once make one job, not two.
  const before = settingHeartbeat.get(input.workerId) ?? Promise.resolve();
  const change = before.then(() => applyHeartbeat(services, input, createdBy));
  const settled = change.then(
    () => undefined,
    () => undefined,
  );
  settingHeartbeat.set(input.workerId, settled);
  void settled.then(() => {
    if (settingHeartbeat.get(input.workerId) === settled) settingHeartbeat.delete(input.workerId);
  });
  return change;
}

const settingHeartbeat = new Map<string, Promise<void>>();

async function applyHeartbeat(
  services: { scheduler: CronScheduler; sessions: SessionStore },
  input: CronHeartbeatInput,
  createdBy: CronCreator,
): Promise<CronJob | undefined> {
  const { scheduler, sessions } = services;
  const existing = scheduler.list({ workerId: input.workerId }).find((job) => job.heartbeat === true);
  if (!input.enabled) {
    if (existing !== undefined) await scheduler.remove(existing.jobId);
    return undefined;
  }
  const every = input.every ?? DEFAULT_HEARTBEAT_EVERY;
  if (existing !== undefined) {
    return scheduler.update({ jobId: existing.jobId, schedule: { every }, enabled: true });
  }
  const session = await sessions.create({ workerId: input.workerId as WorkerId, name: 'Heartbeat' });
  try {
    return await scheduler.add(
      {
        workerId: input.workerId,
        name: 'heartbeat',
        schedule: { every },
        prompt: 'The checklist in HEARTBEAT.md',
        session: session.sessionId,
        onAsk: 'deny',
      },
      { createdBy, defaultTarget: { type: 'session', sessionId: session.sessionId }, heartbeat: true },
    );
  } catch (error) {
    // A refused interval leaves no session behind.
    await sessions.delete(session.sessionId).catch(() => undefined);
    throw error;
  }
}
