import { describe, expect, it } from 'vitest';
import { checkNode } from './check-node.ts';

describe('the Node.js check', () => {
  it.each([
    ['24.0.0', 'ok'],
    ['25.1.0', 'ok'],
    ['22.18.0', 'warning'],
    ['23.11.1', 'warning'],
    ['22.17.1', 'error'],
    ['20.20.2', 'error'],
  ])('finds Node.js %s %s', (version, status) => {
    const check = checkNode(version);
    expect(check.status).toBe(status);
    expect(check.summary).toContain(version);
    if (status !== 'ok') expect(check.fix).toContain('npx -y pnpm@10 install');
  });
});
