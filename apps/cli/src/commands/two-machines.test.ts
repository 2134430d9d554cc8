import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeLlm } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import {
  CLI,
  captureOutput,
  spawnCommand,
  spawnMolf,
  useTestScope,
  writeFakeModelConfig,
} from '../testing/cli-test-kit.ts';
import { createTwoMachines, whyNoNetworkNamespaces } from '../testing/network-namespaces.ts';

const { cleanups, tempDir } = useTestScope('two-machines');

const PAIRING_CODE = /\b[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}\b/;
const FINGERPRINT = /\b([0-9A-F]{2}:){31}[0-9A-F]{2}\b/;

const unavailable = await whyNoNetworkNamespaces();

describe.skipIf(unavailable !== undefined)(
  `a server and a worker on two machines (network namespaces${unavailable === undefined ? '' : `; skipped: ${unavailable}`})`,
  () => {
    it('pairs the worker over TLS with the fingerprint the server printed, and a session on a third machine runs a tool call across', async () => {
      const machines = await createTwoMachines();
      cleanups.push(() => machines.remove());
      const llm = await startFakeLlm({
        host: machines.hostForServer,
        turns: [
          { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
          { text: 'The notes say: across the wire.' },
        ],
      });
      cleanups.push(() => llm.close());

      // The server machine: its own data dir, listening on every address of its namespace.
      const serverHome = await tempDir();
      await writeFakeModelConfig(serverHome, llm.baseURL);
      const serverEnv = { MOLF_HOME: serverHome, MOLF_LOG_FILE: 'none' };
      const [ipCommand, serverArgs] = machines.inside(machines.server, process.execPath, [
        CLI,
        'server',
        '--host',
        '0.0.0.0',
        '--port',
        '7600',
      ]);
      const server = spawnCommand(ipCommand, serverArgs, { env: serverEnv });
      const serverOutput = captureOutput(server);
      await serverOutput.seen('wss://');
      const fingerprint = serverOutput.text().match(FINGERPRINT)?.[0];
      expect(fingerprint, serverOutput.text()).toBeDefined();

      // `molf pair` on the server machine: one code for the worker, one for a person's client.
      const workerPairing = await spawnMolf(['pair', '--role', 'worker'], { env: serverEnv });
      const workerCode = workerPairing.stdout.match(PAIRING_CODE)?.[0];
      expect(workerCode, `${workerPairing.stdout}${workerPairing.stderr}`).toBeDefined();
      const clientPairing = await spawnMolf(['pair', '--role', 'operator'], { env: serverEnv });
      const clientCode = clientPairing.stdout.match(PAIRING_CODE)?.[0];
      expect(clientCode, `${clientPairing.stdout}${clientPairing.stderr}`).toBeDefined();

      // The worker machine: nothing shared with the server but the link.
      const workerHome = await tempDir();
      const project = await tempDir();
      await writeFile(join(project, 'notes.txt'), 'across the wire\n');
      const [, workerArgs] = machines.inside(machines.worker, process.execPath, [
        CLI,
        'worker',
        '--server',
        `wss://${machines.serverForWorker}:7600`,
        '--pair',
        workerCode ?? '',
        '--fingerprint',
        fingerprint ?? '',
        '--workdir',
        project,
      ]);
      const worker = spawnCommand(ipCommand, workerArgs, {
        env: { MOLF_HOME: workerHome, MOLF_CLIENT_DIR: join(workerHome, 'client'), MOLF_LOG_FILE: 'none' },
      });
      const workerOutput = captureOutput(worker);
      await workerOutput.seen('serving');
      expect(workerOutput.text()).toMatch(/paired as/);

      // A third machine (this process's namespace) logs in by code and runs a prompt.
      const clientHome = await tempDir();
      const clientEnv = { MOLF_HOME: clientHome, MOLF_CLIENT_DIR: join(clientHome, 'client'), MOLF_LOG_FILE: 'none' };
      const serverUrl = `wss://${machines.serverForHost}:7600`;
      const login = await spawnMolf(
        ['login', serverUrl, '--pair', clientCode ?? '', '--fingerprint', fingerprint ?? ''],
        {
          env: clientEnv,
        },
      );
      expect(login.exitCode, `${login.stdout}${login.stderr}`).toBe(0);
      expect(login.stdout).toMatch(/as .*operator/);

      const result = await spawnMolf(['run', 'What do the notes say?', '--server', serverUrl], { env: clientEnv });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain('The notes say: across the wire.');
      const toolResult = JSON.stringify(llm.requests[1]?.messages ?? []);
      expect(toolResult).toContain('across the wire');
    });
  },
);
