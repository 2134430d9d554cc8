#!/usr/bin/env node
// The `molf` command (scripts/molf runs it). Runs the bundle that `pnpm install` builds into
// apps/cli/dist, which Node starts without loading its TypeScript stripper, while the bundle is as
// new as its sources; otherwise the TypeScript sources, slower to start but never stale.
import { bundleIsFresh } from './bundle-is-fresh.js';

await import(bundleIsFresh() ? '../dist/main.js' : '../src/main.ts');
