import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { type ToolResult, toErrorResult, toolDefinitions } from '@molf/protocol';
import { describeSandboxRefusal, detectSandboxRefusal, sandboxStarted, type WrappedCommand } from '../sandbox/index.ts';
import { createBoundedCapture } from './bounded-capture.ts';
import { pickShell } from './pick-shell.ts';
import { resolveToolPath } from './resolve-tool-path.ts';
import { scrubEnvironment } from './scrub-environment.ts';
import { abortedByTimeout, defineToolHandler } from './tool-handler.ts';
import { cutPreview } from './truncate-output.ts';

/** Grace between SIGTERM and SIGKILL for the command's process group, as in the reference. */
export const KILL_GRACE_MS = 200;
/** How long pipes may stay open after the shell exited (a background child holding them). */
const PIPE_GRACE_MS = 100;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** The preview of an output too large to show whole: its start, a gap marker, its end. */
function previewOf(capture: { head: Buffer; tail: Buffer; totalBytes: number; lines: number }): string {
  const head = capture.head.toString('utf8').replace(/\uFFFD+$/, '');
  const headCut = cutPreview(head, { maxLines: 1_600, maxBytes: capture.head.length }) ?? {
    preview: head,
    shownLines: head.split('\n').length,
  };
  let tail = capture.tail.toString('utf8');
  // Start the tail at a line boundary, and keep at most 400 lines of it.
  const firstBreak = tail.indexOf('\n');
  if (firstBreak !== -1 && firstBreak < tail.length - 1) tail = tail.slice(firstBreak + 1);
  const tailLines = tail.split('\n');
  if (tailLines.length > 400) tail = tailLines.slice(-400).join('\n');
  const omitted = capture.totalBytes - Buffer.byteLength(headCut.preview) - Buffer.byteLength(tail);
  return `${headCut.preview}\n[… ${omitted} bytes omitted …]\n${tail}`;
}

export const shellExecTool = defineToolHandler({
  definition: toolDefinitions.shell_exec,
  async run(args, { paths, toolCallId, signal, logger, sandbox, reaper }): Promise<ToolResult> {
    let cwd = paths.workdir;
    if (args.cwd !== undefined) {
      const resolved = await resolveToolPath(paths, args.cwd);
      if (!resolved.ok) return resolved.error;
      const info = await stat(resolved.value.canonical).catch(() => undefined);
      if (info === undefined) return toErrorResult('not_found', `The working directory ${args.cwd} does not exist.`);
      if (!info.isDirectory()) return toErrorResult('not_regular_file', `${args.cwd} is not a directory.`);
      cwd = resolved.value.canonical;
    }

    const shell = pickShell();
    let command: WrappedCommand;
    try {
      command =
        sandbox === undefined
          ? { file: shell, args: ['-c', args.command], fds: [], close: () => {} }
          : await sandbox.wrap({ file: shell, args: ['-c', args.command], cwd }, { passFds: true, status: true });
    } catch (error) {
      logger.error({ err: error, toolCallId }, 'the sandbox could not start the command');
      return toErrorResult('internal', `The sandbox could not start the command: ${(error as Error).message}`);
    }
    const capture = await createBoundedCapture({ workdir: paths.workdir, outputId: toolCallId });
    // Own process group (detached) so a timeout or cancel reaches every grandchild; stdin closed;
    // the environment without Molf tokens or provider keys. In the sandbox, bwrap gets the
    // descriptors of what it binds as fds 3, 4, … (it closes them before the command runs).
    const child = (() => {
      try {
        return spawn(command.file, command.args, {
          cwd,
          env: scrubEnvironment(process.env),
          detached: true,
          stdio: [
            'ignore',
            'pipe',
            'pipe',
            ...command.fds,
            ...(command.statusFd === undefined ? [] : ['pipe' as const]),
          ],
        }) as ChildProcessByStdio<null, Readable, Readable>;
      } finally {
        command.close();
      }
    })();
    // The group outlives a worker killed with SIGKILL unless something else ends it.
    if (child.pid !== undefined) reaper?.track(child.pid);

    let stoppedBy: 'timeout' | 'cancel' | undefined;
    const stop = () => {
      if (child.pid === undefined || stoppedBy !== undefined) return;
      stoppedBy = abortedByTimeout(signal) ? 'timeout' : 'cancel';
      const pid = child.pid;
      killGroup(pid, 'SIGTERM');
      // Not unref'd: a short-lived caller (molf tool) must not exit before the SIGKILL is sent.
      setTimeout(() => killGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
    };
    if (signal.aborted) stop();
    signal.addEventListener('abort', stop, { once: true });

    // bwrap's status: whether the command started (a few hundred bytes at most are kept).
    let status = '';
    const statusStream = command.statusFd === undefined ? undefined : (child.stdio[command.statusFd] as Readable);
    const statusRead = new Promise<void>((resolve) => {
      if (statusStream === undefined) return resolve();
      statusStream.on('data', (chunk: Buffer) => {
        if (status.length < 1_024) status += chunk.toString('utf8');
      });
      statusStream.on('close', () => resolve());
      statusStream.on('error', () => resolve());
    });

    // Both streams feed one capture as chunks arrive: interleaved, with back-pressure.
    const pumps = [child.stdout, child.stderr].map(
      (stream) =>
        new Promise<void>((resolve) => {
          stream.on('data', (chunk: Buffer) => {
            stream.pause();
            void capture.write(chunk).then(() => stream.resume());
          });
          stream.on('close', () => resolve());
          stream.on('error', () => resolve());
        }),
    );

    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null } | Error>((resolve) => {
      child.once('error', resolve);
      child.once('exit', (code, exitSignal) => resolve({ code, signal: exitSignal }));
    });
    signal.removeEventListener('abort', stop);
    // Forgotten now if nothing is left in the group (its id may go to another process later).
    if (child.pid !== undefined) reaper?.ended(child.pid);
    if (exit instanceof Error) {
      await capture.finish();
      return toErrorResult('internal', `Could not start ${shell}: ${exit.message}`);
    }
    // A background child may hold the pipes open; don't wait for it beyond a moment.
    const drained = await Promise.race([
      Promise.all(pumps).then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), PIPE_GRACE_MS)),
    ]);
    if (!drained) {
      child.stdout.destroy();
      child.stderr.destroy();
    }
    // Only bwrap (gone now) held its status pipe's other end: read to its end, not raced.
    await statusRead;

    const captured = await capture.finish();
    const exitCode = exit.code ?? 128 + (exit.signal === null ? 0 : (constants.signals[exit.signal] ?? 0));
    let output = captured.fits
      ? Buffer.concat([captured.head, captured.tail]).toString('utf8')
      : captured.outputPath === undefined
        ? `${previewOf(captured)}\n[Output truncated: ${captured.lines} lines, ${captured.totalBytes} bytes in all. ` +
          `The full output could not be saved (${captured.fileError?.message ?? 'unknown error'}).]`
        : `${previewOf(captured)}\n[Output truncated: ${captured.lines} lines, ${captured.totalBytes} bytes in all. ` +
          `The full output is in ${captured.outputPath}; read it with read_file {"path": "${captured.outputPath}", "startLine": 1} ` +
          `or search it with grep {"pattern": "…", "path": "${captured.outputPath}"}.]`;
    if (captured.fileError !== undefined) {
      logger.warn({ err: captured.fileError, toolCallId }, 'could not save the full shell output');
    }
    const body = output.replace(/\n+$/, '');
    output = body === '' ? `exit code: ${exitCode}` : `${body}\n\nexit code: ${exitCode}`;
    const meta = {
      exitCode,
      truncated: !captured.fits,
      ...(captured.outputPath === undefined
        ? {}
        : { outputId: toolCallId, outputPath: captured.outputPath, outputBytes: captured.totalBytes }),
    };
    if (stoppedBy === 'timeout') {
      return {
        output,
        error: `The command did not finish within its timeout and was killed (with its whole process group).`,
        meta: { ...meta, errorKind: 'timeout' },
      };
    }
    if (stoppedBy === 'cancel') {
      return { output, error: 'The command was cancelled and killed.', meta: { ...meta, errorKind: 'cancelled' } };
    }
    const refusal =
      sandbox === undefined
        ? undefined
        : detectSandboxRefusal({
            output: body,
            exitCode,
            network: sandbox.network,
            cwd,
            canWrite: sandbox.canWrite,
            ...(statusStream === undefined ? {} : { started: sandboxStarted(status) }),
          });
    if (refusal !== undefined && sandbox !== undefined) {
      logger.warn(
        { toolCallId, refusal: refusal.type, command: args.command.slice(0, 200), exitCode },
        'sandbox refused',
      );
      return {
        output,
        error: describeSandboxRefusal(refusal, sandbox),
        meta: {
          ...meta,
          errorKind: refusal.type === 'setup' ? 'internal' : 'sandbox_refused',
          sandboxRefusal: refusal.type,
        },
      };
    }
    return { output, meta };
  },
});
