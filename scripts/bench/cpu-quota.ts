/**
 * A fixed share of a core for one process: a CFS quota in a cgroup of its own, through cgroup v1's
 * `cpu` controller or cgroup v2's `cpu.max`. It lets a small machine give each server instance CPU of
 * its own, as a core per instance would, scaled down. Needs root.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type CpuQuota = {
  /** The cgroup's directory. */
  path: string;
  /** Moves a process (every thread of it) into the quota. */
  confine(pid: number): void;
  /** Moves what is still inside back out and removes the cgroup. Idempotent. */
  remove(): void;
};

/** A short period, so that a confined process runs often in small slices, as on a slower core, rather than in bursts. */
const PERIOD_US = 10_000;
const V1_ROOT = '/sys/fs/cgroup/cpu';
const V2_ROOT = '/sys/fs/cgroup';

/** Where quotas can be made here: a v1 `cpu` hierarchy, or a v2 root that offers the `cpu` controller. */
function findHierarchy(): { version: 1 | 2; root: string } | undefined {
  if (existsSync(join(V1_ROOT, 'cpu.cfs_quota_us'))) return { version: 1, root: V1_ROOT };
  const controllers = join(V2_ROOT, 'cgroup.controllers');
  if (existsSync(controllers) && readFileSync(controllers, 'utf8').split(/\s+/).includes('cpu')) {
    return { version: 2, root: V2_ROOT };
  }
  return undefined;
}

/** `name` must be unique on the machine (a pid in it does); `cores` is the share, e.g. 0.3. */
export function createCpuQuota(name: string, cores: number): CpuQuota {
  if (!(cores > 0 && cores <= 64)) throw new Error(`a CPU quota takes a share of cores in (0, 64] (got ${cores})`);
  const hierarchy = findHierarchy();
  if (hierarchy === undefined) {
    throw new Error('a CPU quota needs a cgroup cpu controller (v1 /sys/fs/cgroup/cpu or v2 cpu.max), as root');
  }
  const path = join(hierarchy.root, name);
  const quota = Math.round(cores * PERIOD_US);
  // v2 offers the controller to the root's children only when asked.
  if (hierarchy.version === 2) writeFileSync(join(hierarchy.root, 'cgroup.subtree_control'), '+cpu');
  mkdirSync(path);
  if (hierarchy.version === 1) {
    writeFileSync(join(path, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(path, 'cpu.cfs_quota_us'), String(quota));
  } else {
    writeFileSync(join(path, 'cpu.max'), `${quota} ${PERIOD_US}`);
  }
  let removed = false;
  return {
    path,
    confine(pid) {
      writeFileSync(join(path, 'cgroup.procs'), String(pid));
    },
    remove() {
      if (removed) return;
      removed = true;
      const inside = readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
      for (const pid of inside) {
        try {
          writeFileSync(join(hierarchy.root, 'cgroup.procs'), pid);
        } catch {
          // It exited meanwhile.
        }
      }
      rmdirSync(path);
    },
  };
}
