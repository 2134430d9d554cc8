import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { closeLogger, createLogger, redactText } from './create-logger.ts';

function memoryStream(options: { isTTY?: boolean } = {}) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  // What a terminal looks like to the logger (process.stdout has isTTY true on one).
  if (options.isTTY === true) Object.assign(stream, { isTTY: true });
  return { stream, lines };
}

/** Whether the text has an ANSI escape sequence (colour or otherwise). */
const hasAnsiEscape = (text: string) => text.includes('\u001b[');

/** A failure with a cause, as a real one arrives: an outer error wrapping what went wrong below. */
function failureWithCause(): Error {
  return new Error('could not open the session', { cause: new Error('EACCES: permission denied, open meta.json') });
}

/** Lines of a stack trace (`    at fn (file:line:col)`), escaped or not. */
const STACK_LINE = /(^|\\n|\n)\s+at \S/;

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
      const file = join(dir, 'logs', 'server.log');
      let content = '';
      // The file stream writes asynchronously; poll until the line lands.
      for (let attempt = 0; attempt < 200 && content === ''; attempt += 1) {
        content = await readFile(file, 'utf8').catch(() => '');
        if (content === '') await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await readdir(join(dir, 'logs'))).toEqual(['server.log']);
      expect(JSON.parse(content.trim())).toMatchObject({ msg: 'to file', token: '[redacted]' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('has every line on disk once closeLogger resolves, the last one before an exit included', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molf-log-'));
    try {
      const logger = await createLogger({ name: 'server', console: 'none', filePath: join(dir, 'server.log') });
      for (let line = 0; line < 500; line += 1) logger.info({ line }, 'working');
      logger.fatal('stopping');
      await closeLogger(logger);
      const lines = (await readFile(join(dir, 'server.log'), 'utf8')).trim().split('\n');
      expect(lines).toHaveLength(501);
      expect(JSON.parse(lines.at(-1) ?? '')).toMatchObject({ msg: 'stopping', level: 60 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('goes on logging to the console when the log file cannot be written, and says so once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molf-log-'));
    const said: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((text) => {
      said.push(String(text));
      return true;
    });
    try {
      // A directory where the file should be: the stream cannot open it.
      await mkdir(join(dir, 'server.log'));
      const { stream, lines } = memoryStream();
      const logger = await createLogger({ name: 'server', destination: stream, filePath: join(dir, 'server.log') });
      for (let attempt = 0; attempt < 1_000 && said.length === 0; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      logger.info('one');
      logger.info('two');
      await closeLogger(logger);
      expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['one', 'two']);
      expect(said).toHaveLength(1);
      expect(said[0]).toContain(`the log file ${join(dir, 'server.log')} stopped`);
    } finally {
      spy.mockRestore();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('closes a logger without a file at once', async () => {
    const { stream, lines } = memoryStream();
    const logger = await createLogger({ name: 'server', destination: stream });
    logger.info('only line');
    await closeLogger(logger);
    expect(lines).toHaveLength(1);
  });

  it('rotates the log file by size like logrotate and keeps only the configured number of files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molf-log-'));
    try {
      const logger = await createLogger({
        name: 'worker',
        console: 'none',
        filePath: join(dir, 'worker.log'),
        rotation: { size: '1K', files: 3 },
      });
      const filler = 'x'.repeat(200);
      for (let line = 0; line < 60; line += 1) {
        logger.info({ line, filler }, 'line');
        // Rotation happens between writes; give the stream its turn.
        await new Promise((resolve) => setImmediate(resolve));
      }
      logger.info('last');
      let names: string[] = [];
      let live = '';
      for (let attempt = 0; attempt < 1_000; attempt += 1) {
        names = (await readdir(dir)).sort();
        live = await readFile(join(dir, 'worker.log'), 'utf8').catch(() => '');
        if (live.includes('"msg":"last"') && names.length === 3) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(names).toEqual(['worker.1.log', 'worker.2.log', 'worker.log']);
      const older = (await readFile(join(dir, 'worker.2.log'), 'utf8')).trim().split('\n');
      const newer = (await readFile(join(dir, 'worker.1.log'), 'utf8')).trim().split('\n');
      // worker.1.log holds the lines right before the live file's, worker.2.log the ones before those.
      expect(JSON.parse(older.at(-1) ?? '').line).toBe(JSON.parse(newer[0] ?? '').line - 1);
      expect(JSON.parse(older[0] ?? '').line).toBeGreaterThan(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('createLogger on the console', () => {
  it('prints an error for people as one line with its cause chain and no stack below debug', async () => {
    const { stream, lines } = memoryStream({ isTTY: true });
    const logger = await createLogger({ name: 'worker', destination: stream, env: {} });
    logger.warn({ err: failureWithCause(), url: 'ws://127.0.0.1:7600' }, 'could not send the tool list');
    expect(lines).toHaveLength(1);
    const line = stripVTControlCharacters(lines[0] ?? '');
    expect(line).toContain(
      'WARN (worker): could not send the tool list: could not open the session: EACCES: permission denied, open meta.json',
    );
    expect(line).toContain('ws://127.0.0.1:7600');
    expect(line).not.toMatch(STACK_LINE);
  });

  it('shows the stack on the console at debug', async () => {
    const { stream, lines } = memoryStream({ isTTY: true });
    const logger = await createLogger({ name: 'worker', level: 'debug', destination: stream, env: {} });
    logger.error({ err: failureWithCause() }, 'failed');
    expect(lines.join('\n')).toMatch(STACK_LINE);
  });

  it('leaves the stack out of console JSON below debug, with the cause chain in the message', async () => {
    const { stream, lines } = memoryStream();
    const logger = await createLogger({ name: 'server', destination: stream });
    logger.error({ err: failureWithCause() }, 'failed');
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] ?? '');
    expect(entry.err.message).toBe('could not open the session: EACCES: permission denied, open meta.json');
    expect(lines[0]).not.toMatch(STACK_LINE);
    expect(entry.err.stack).toBeUndefined();

    const debug = memoryStream();
    const debugLogger = await createLogger({ name: 'server', level: 'debug', destination: debug.stream });
    debugLogger.error({ err: failureWithCause() }, 'failed');
    expect(JSON.parse(debug.lines[0] ?? '').err.stack).toMatch(STACK_LINE);
  });

  it('keeps the stack in the log file while the console line has none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molf-log-'));
    try {
      const { stream, lines } = memoryStream();
      const logger = await createLogger({ name: 'server', destination: stream, filePath: join(dir, 'server.log') });
      logger.error({ err: failureWithCause() }, 'failed');
      logger.flush();
      expect(lines[0]).not.toMatch(STACK_LINE);
      const file = join(dir, 'server.log');
      let content = '';
      for (let attempt = 0; attempt < 1_000 && content === ''; attempt += 1) {
        content = await readFile(file, 'utf8').catch(() => '');
        if (content === '') await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(JSON.parse(content.trim()).err.stack).toMatch(STACK_LINE);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('colours lines on a terminal', async () => {
    const { stream, lines } = memoryStream({ isTTY: true });
    const logger = await createLogger({ name: 'server', destination: stream, env: {} });
    logger.info('listening');
    expect(hasAnsiEscape(lines[0] ?? '')).toBe(true);
  });

  it('never colours with NO_COLOR set, even on a terminal', async () => {
    const { stream, lines } = memoryStream({ isTTY: true });
    const logger = await createLogger({ name: 'server', destination: stream, env: { NO_COLOR: '1' } });
    logger.info('listening');
    logger.error({ err: failureWithCause() }, 'failed');
    expect(lines[0]).toContain('INFO (server): listening');
    expect(hasAnsiEscape(lines.join('\n'))).toBe(false);
  });

  it('never colours when the console is not a terminal, pretty or JSON', async () => {
    const pretty = memoryStream();
    const logger = await createLogger({ name: 'server', console: 'pretty', destination: pretty.stream, env: {} });
    logger.warn('not a terminal');
    expect(pretty.lines[0]).toContain('WARN (server): not a terminal');
    expect(hasAnsiEscape(pretty.lines.join('\n'))).toBe(false);

    const json = memoryStream();
    const jsonLogger = await createLogger({ name: 'server', destination: json.stream, env: {} });
    jsonLogger.warn('not a terminal');
    expect(JSON.parse(json.lines[0] ?? '').msg).toBe('not a terminal');
  });
});

describe('redactText', () => {
  it('masks Molf tokens and bearer values but keeps other text', () => {
    expect(redactText('token molf_w_0123456789abcdef here')).toBe('token [redacted] here');
    expect(redactText('plain text')).toBe('plain text');
  });
});
