#!/usr/bin/env node
// The `molf` command (scripts/molf runs it). Runs the bundle that `pnpm install` builds into
// apps/cli/dist, which Node starts without loading its TypeScript stripper, while the bundle is as
// new as its sources; otherwise the TypeScript sources, slower to start but never stale.
import { setFlagsFromString } from 'node:v8';
import { bundleIsFresh } from './bundle-is-fresh.js';

// The long-running commands start in V8's baseline tiers and turn the optimising compilers back on
// once they serve (apps/cli/src/finish-startup.ts says why).
const command = process.argv[2];
if (command === 'server' || command === 'worker') {
  setFlagsFromString('--no-turbofan');
  setFlagsFromString('--no-maglev');
}

await import(bundleIsFresh() ? '../dist/main.js' : '../src/main.ts');
