import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactText } from './create-logger.ts';

function memoryStream() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  return { stream, lines };
}

describe('createLogger', () => {
  it('writes JSON lines when the console is not a terminal', async () => {
    const { stream, lines } = memoryStream();
    const logger = await createLogger({ name: 'server', destination: stream });
    logger.info({ port: 7600 }, 'listening');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ name: 'server', msg: 'listening', port: 7600, level: 30 });
  });

  it('redacts tokens and keys wherever they appear', async () => {
    const { stream, lines } = memoryStream();
    const logger = await createLogger({ name: 'server', destination: stream });
    const token = 'molf_c_abcdefghijklmnopqrstuvwxyz012345';
    logger.info({ token, nested: { apiKey: 'sk-secret-value' }, headers: { authorization: 'Bearer abc' } }, 'connect');
    logger.warn(`a message that quotes ${token} by mistake`);
    logger.error({ err: new Error(`failed with Bearer ${'x'.repeat(20)}`) }, 'oops');
    const text = lines.join('\n');
    expect(text).not.toContain(token);
    expect(text).not.toContain('sk-secret-value');
    expect(text).not.toContain('Bearer abc');
    expect(text).not.toContain('x'.repeat(20));
    expect(text).toContain('[redacted]');
  });

  it('honours the level and logs nothing when silent', async () => {
    const { stream, lines } = memoryStream();
    const logger = await createLogger({ name: 'worker', level: 'warn', destination: stream });
    logger.info('hidden');
    logger.warn('shown');
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['shown']);

    const silent = memoryStream();
    const quiet = await createLogger({ name: 'worker', level: 'silent', destination: silent.stream });
    quiet.error('nothing');
    expect(silent.lines).toEqual([]);
  });

  it('also writes to a rotating log file under the given path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molf-log-'));
    try {
      const logger = await createLogger({ name: 'server', console: 'none', filePath: join(dir, 'logs', 'server.log') });
      logger.info({ token: 'molf_w_abcdefghijklmnopqrstuvwxyz' }, 'to file');
      logger.flush();
      const file = join(dir, 'logs', 'server.1.log');
      let content = '';
      // The file stream writes asynchronously; poll until the line lands.
      for (let attempt = 0; attempt < 200 && content === ''; attempt += 1) {
        content = await readFile(file, 'utf8').catch(() => '');
        if (content === '') await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await readdir(join(dir, 'logs'))).toEqual(['server.1.log']);
      expect(JSON.parse(content.trim())).toMatchObject({ msg: 'to file', token: '[redacted]' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('redactText', () => {
  it('masks Molf tokens and bearer values but keeps other text', () => {
    expect(redactText('token molf_w_0123456789abcdef here')).toBe('token [redacted] here');
    expect(redactText('plain text')).toBe('plain text');
  });
});
