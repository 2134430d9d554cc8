import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type CollectGarbage = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * Ends the start-up of a long-running process (`molf server`, `molf worker`) once it is ready and
 * about to wait, so that what it holds while idle is what serving needs, not what starting took:
 *
 * - V8's optimising compilers come back on. `bin/molf.js` turns them off for these commands before
 *   any module loads: start-up code runs once, and running the compilers pages 8 MiB of their own
 *   machine code into the process. The price is start-up time: a worker registers about 60 ms later
 *   (250 -> 315 ms, docs/benchmarks.md). From here on, code that runs hot while serving is
 *   optimised as usual.
 * - A full collection that reduces the footprint (what V8 does under memory pressure) gives back the
 *   young generation, which loading every module grew to 16 MiB and V8 would otherwise keep at that
 *   size while the process idles: 9 MiB less. It grows again if work needs it.
 *
 * V8 offers that collection only through `gc()`, which exists in contexts made while `--expose-gc`
 * is set; this one is made for the call and dropped, so no code of Molf's or a dependency's sees a `gc`.
 */
export function finishStartup(): void {
  setFlagsFromString('--turbofan');
  setFlagsFromString('--maglev');
  setFlagsFromString('--expose-gc');
  try {
    const collect = runInNewContext('gc') as CollectGarbage;
    collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
