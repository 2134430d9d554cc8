import { describe, expect, it } from 'vitest';
import { parseUpPlan, type UpPlan } from './up-plan.ts';

const plan: UpPlan = {
  projectDir: '/home/me/project',
  cliMain: '/opt/molf/bin/molf.js',
  nodeOptions: [],
  serverArgs: ['server', '--port', '0'],
  workerArgs: ['worker', '--workdir', '/home/me/project'],
  env: { MOLF_LOG_LEVEL: 'info' },
};

describe('the plan molf up hands its supervisor', () => {
  it('round-trips through JSON', () => {
    expect(parseUpPlan(JSON.stringify(plan))).toEqual(plan);
  });

  it('says what is wrong instead of starting anything from a missing, broken or foreign plan', () => {
    expect((parseUpPlan(undefined) as Error).message).toBe('MOLF_UP_PLAN is not set: run `molf up`, not this file');
    expect((parseUpPlan('{') as Error).message).toBe('MOLF_UP_PLAN is not JSON');
    for (const broken of [
      null,
      [],
      { ...plan, projectDir: 7 },
      { ...plan, serverArgs: 'server' },
      { ...plan, workerArgs: [1] },
      { ...plan, env: { MOLF_LOG_LEVEL: 1 } },
      { ...plan, nodeOptions: undefined },
    ]) {
      expect((parseUpPlan(JSON.stringify(broken)) as Error).message, JSON.stringify(broken)).toBe(
        'MOLF_UP_PLAN does not hold a plan of molf up',
      );
    }
  });
});
