import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import type { WorkerSandbox } from '@molf/protocol';
import { createSandboxRunner, type WrappedCommand } from './create-sandbox-runner.ts';
import type { SandboxSettings } from './sandbox-config.ts';

export type SandboxSelfTest = NonNullable<WorkerSandbox['selfTest']>;
type Check = SandboxSelfTest['checks'][number];

/** How long the probe may take before the self-test gives up on it. */
const PROBE_TIMEOUT_MS = 20_000;

/** What a failed check means, for the `failed` line people read. */
const FAILURE: Record<string, string> = {
  'write-outside-workdir': 'a command could write outside the workdir',
  'hidden-probe': 'a command could read a hidden file',
  'hidden-paths': 'a hidden path is readable',
  'pid-namespace': "a command can see the worker's process",
  capabilities: 'commands keep capabilities (a hidden directory could be unmounted)',
  'network-off': 'a command reached the host with the network cut',
};

/**
 * Runs inside the sandbox (plain Node, so the probe needs no particular shell) and prints its
 * checks as JSON. The host side judges the write again on disk.
 */
const PROBE = String.raw`
const fs = require('node:fs');
const net = require('node:net');
const crypto = require('node:crypto');
const input = JSON.parse(process.argv[1]);
const checks = [];
const add = (name, ok, detail) => checks.push(detail === undefined ? { name, ok } : { name, ok, detail: String(detail).slice(0, 400) });
try {
  fs.writeFileSync(input.writeProbe, 'escaped');
  add('write-outside-workdir', false, 'wrote ' + input.writeProbe);
} catch (error) {
  add('write-outside-workdir', true, error.code);
}
let secret;
try { secret = fs.readFileSync(input.secretFile, 'utf8'); } catch (error) { secret = undefined; }
const leaked = secret !== undefined && secret.includes(input.secret);
add('hidden-probe', !leaked, leaked ? 'read ' + input.secretFile : undefined);
const visible = [];
for (const path of input.hidden) {
  try {
    const info = fs.statSync(path);
    if (info.isDirectory()) {
      const entries = fs.readdirSync(path).length;
      if (entries > 0) visible.push(path + ' lists ' + entries + ' entries');
    } else {
      const bytes = fs.readFileSync(path).length;
      if (bytes > 0) visible.push(path + ' reads ' + bytes + ' bytes');
    }
  } catch (error) {
    // Unreadable or absent: hidden.
  }
}
add('hidden-paths', visible.length === 0, visible.length === 0 ? undefined : visible.join('; '));
let namespace;
try { namespace = fs.readlinkSync('/proc/self/ns/pid'); } catch (error) { namespace = undefined; }
let workerSeen = false;
try {
  const cmdline = fs.readFileSync('/proc/' + input.workerPid + '/cmdline');
  workerSeen = crypto.createHash('sha256').update(cmdline).digest('hex') === input.workerCmdlineHash;
} catch (error) {
  workerSeen = false;
}
add('pid-namespace', namespace !== input.pidNamespace && !workerSeen,
  workerSeen ? '/proc/' + input.workerPid + ' is the worker' : namespace === input.pidNamespace ? 'same PID namespace as the worker' : undefined);
const status = fs.readFileSync('/proc/self/status', 'utf8');
const effective = /CapEff:\s*([0-9a-f]+)/.exec(status);
add('capabilities', effective !== null && /^0+$/.test(effective[1]), effective === null ? 'no CapEff line' : 'CapEff ' + effective[1]);
const done = () => { process.stdout.write(JSON.stringify(checks)); process.exit(0); };
if (input.port === undefined) done();
else {
  let settled = false;
  const settle = (ok, detail) => { if (settled) return; settled = true; add('network-off', ok, detail); done(); };
  const socket = net.connect(input.port, '127.0.0.1');
  socket.on('connect', () => settle(false, 'connected to 127.0.0.1:' + input.port + ' on the host'));
  socket.on('error', (error) => settle(true, error.code));
  setTimeout(() => settle(true, 'no answer'), 3000);
}
`;

function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

/**
 * A fresh directory on the host, outside the workdir, the writable paths and /tmp (private in the
 * sandbox, where a failed write would prove nothing): `${XDG_CACHE_HOME:-~/.cache}/molf/…`, else
 * under the OS temp dir.
 */
async function makeProbeDirectory(settings: SandboxSettings, env: NodeJS.ProcessEnv): Promise<string> {
  const cache = env.XDG_CACHE_HOME !== undefined && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : undefined;
  const candidates = [join(cache ?? join(homedir(), '.cache'), 'molf'), tmpdir()];
  let lastError: unknown;
  for (const candidate of candidates) {
    if ([settings.workdir, ...settings.writable].some((root) => isInside(root, candidate))) continue;
    try {
      await mkdir(candidate, { recursive: true, mode: 0o700 });
      return await mkdtemp(join(candidate, 'sandbox-self-test-'));
    } catch (error) {
      lastError = error;
    }
  }
  throw new Error(`no directory outside the writable paths to probe (${(lastError as Error | undefined)?.message})`);
}

async function listen(): Promise<Server> {
  const server = createServer((socket) => {
    // The probe exits as soon as it connected: a reset is expected.
    socket.on('error', () => {});
    socket.end('reached');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return server;
}

function runProbe(command: WrappedCommand & { cwd: string }): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = (() => {
      try {
        return spawn(command.file, command.args, {
          cwd: command.cwd,
          // Only what Node needs: NODE_OPTIONS and the like of the worker must not change the probe.
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe', ...command.fds],
        }) as ChildProcessByStdio<null, Readable, Readable>;
      } finally {
        command.close();
      }
    })();
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      stderr += `\nthe probe did not finish within ${PROBE_TIMEOUT_MS / 1000} s`;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone.
      }
    }, PROBE_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ stdout, stderr: `${stderr}${error.message}` });
    });
    child.once('close', () => {
      clearTimeout(timer);
      resolve({ stdout, stderr });
    });
  });
}

function parseChecks(stdout: string): Check[] | undefined {
  try {
    const value: unknown = JSON.parse(stdout);
    return Array.isArray(value) ? (value as Check[]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Proves at start that the policy enforces, by running a probe under exactly that policy (plus one
 * hidden probe directory): a write to a host directory outside the workdir fails and leaves no
 * file, a secret in a hidden directory and every existing hidden path read as nothing, the
 * worker's process is out of sight (new PID namespace), no capability is left, and with the
 * network cut a listener on the host's loopback cannot be reached.
 */
export async function runSandboxSelfTest(options: {
  bwrap: string;
  settings: SandboxSettings;
  env: NodeJS.ProcessEnv;
}): Promise<SandboxSelfTest> {
  const { settings } = options;
  let probeDirectory: string;
  try {
    probeDirectory = await makeProbeDirectory(settings, options.env);
  } catch (error) {
    return { ok: false, failed: (error as Error).message, checks: [] };
  }
  const listener = settings.network ? undefined : await listen().catch(() => undefined);
  try {
    const hiddenDirectory = join(probeDirectory, 'hidden');
    const secretFile = join(hiddenDirectory, 'secret.txt');
    const secret = randomBytes(16).toString('hex');
    await mkdir(hiddenDirectory);
    await writeFile(secretFile, secret, { mode: 0o600 });
    const writeProbe = join(probeDirectory, 'written-from-the-sandbox.txt');
    const address = listener?.address();
    const input = {
      writeProbe,
      secretFile,
      secret,
      // A hidden directory above the workdir (or a writable path) shows their mount points.
      hidden: settings.hidden.filter(
        (path) => ![settings.workdir, ...settings.writable].some((root) => isInside(path, root)),
      ),
      workerPid: process.pid,
      workerCmdlineHash: createHash('sha256').update(readFileSync('/proc/self/cmdline')).digest('hex'),
      pidNamespace: readlinkSync('/proc/self/ns/pid'),
      port: typeof address === 'object' && address !== null ? address.port : undefined,
    };
    if (!settings.network && input.port === undefined) {
      return { ok: false, failed: 'could not open a loopback listener to test the cut network', checks: [] };
    }
    const runner = createSandboxRunner({
      bwrap: options.bwrap,
      settings: { ...settings, hidden: [...settings.hidden, hiddenDirectory] },
    });
    // As shell_exec runs its commands: with descriptors.
    let command: WrappedCommand;
    try {
      command = await runner.wrap(
        { file: process.execPath, args: ['-e', PROBE, JSON.stringify(input)], cwd: settings.workdir },
        { passFds: true },
      );
    } catch (error) {
      return { ok: false, failed: `the sandbox could not be set up: ${(error as Error).message}`, checks: [] };
    }
    const { stdout, stderr } = await runProbe({ ...command, cwd: settings.workdir });
    const checks = parseChecks(stdout);
    if (checks === undefined) {
      const reason = stderr.trim().split('\n')[0] ?? '';
      return { ok: false, failed: `bwrap could not run the probe: ${reason || 'no output'}`, checks: [] };
    }
    // The probe may have been fooled; the host's disk is not.
    if (existsSync(writeProbe)) {
      const index = checks.findIndex((check) => check.name === 'write-outside-workdir');
      const failedWrite = { name: 'write-outside-workdir', ok: false, detail: `${writeProbe} appeared on the host` };
      if (index === -1) checks.push(failedWrite);
      else checks[index] = failedWrite;
    }
    const failedCheck = checks.find((check) => !check.ok);
    return failedCheck === undefined
      ? { ok: true, checks }
      : {
          ok: false,
          failed: `${FAILURE[failedCheck.name] ?? failedCheck.name}${failedCheck.detail === undefined ? '' : ` (${failedCheck.detail})`}`,
          checks,
        };
  } finally {
    listener?.close();
    await rm(probeDirectory, { recursive: true, force: true });
  }
}
