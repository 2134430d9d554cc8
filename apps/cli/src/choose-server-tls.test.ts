import { describe, expect, it } from 'vitest';
import { chooseServerTls } from './choose-server-tls.ts';
import { isLoopbackHost } from './is-loopback-host.ts';

const flag = (value: string) => ({ value, from: 'flag' as const });
const env = (value: string) => ({ value, from: 'env' as const });

describe('chooseServerTls', () => {
  it.each([
    ['plain on loopback by default', { host: '127.0.0.1' }, { type: 'plain' }],
    ['plain on localhost by default', { host: 'localhost' }, { type: 'plain' }],
    ['plain on ::1 by default', { host: '::1' }, { type: 'plain' }],
    ['TLS on loopback with --tls', { host: '127.0.0.1', tls: true }, { type: 'generated', renew: false }],
    ['TLS on every address by default', { host: '0.0.0.0' }, { type: 'generated', renew: false }],
    ['TLS on a LAN address by default', { host: '192.168.1.20' }, { type: 'generated', renew: false }],
    ['TLS on a host name by default', { host: 'molf.lan' }, { type: 'generated', renew: false }],
    [
      'the own files, given as flags, on loopback',
      { host: '127.0.0.1', certFile: flag('c.pem'), keyFile: flag('k.pem') },
      { type: 'files', certFile: 'c.pem', keyFile: 'k.pem' },
    ],
    [
      'the own files from the environment when TLS is on',
      { host: '0.0.0.0', certFile: env('c.pem'), keyFile: env('k.pem') },
      { type: 'files', certFile: 'c.pem', keyFile: 'k.pem' },
    ],
    [
      'plain on loopback when the files come from the environment only (molf up inherits it)',
      { host: '127.0.0.1', certFile: env('c.pem'), keyFile: env('k.pem') },
      { type: 'plain' },
    ],
    ['a renewal, with TLS on', { host: '0.0.0.0', renew: true }, { type: 'generated', renew: true }],
  ] as const)('%s', (_title, options, expected) => {
    expect(chooseServerTls({ tls: undefined, renew: false, ...options })).toEqual({ ok: true, value: expected });
  });

  it('warns loudly when --no-tls serves plain on an address others can reach', () => {
    const chosen = chooseServerTls({ host: '0.0.0.0', tls: false, renew: false });
    expect(chosen).toEqual({
      ok: true,
      value: { type: 'plain', warning: expect.stringContaining('TLS is off (--no-tls) on 0.0.0.0') },
    });
    if (chosen.ok && chosen.value.type === 'plain') expect(chosen.value.warning).toContain('travel in clear');
  });

  it.each([
    [
      '--no-tls with --tls-cert',
      { host: '0.0.0.0', tls: false, certFile: flag('c'), keyFile: flag('k') },
      'contradict',
    ],
    ['--tls-cert without --tls-key', { host: '0.0.0.0', certFile: flag('c') }, '--tls-cert was given alone'],
    ['--tls-key without --tls-cert', { host: '0.0.0.0', keyFile: env('k') }, '--tls-key was given alone'],
    ['--renew-cert with TLS off on loopback', { host: '127.0.0.1', renew: true }, 'off unless --tls'],
    ['--renew-cert with --no-tls', { host: '0.0.0.0', tls: false, renew: true }, 'TLS is off here (--no-tls)'],
    [
      '--renew-cert with the own files',
      { host: '0.0.0.0', renew: true, certFile: flag('c'), keyFile: flag('k') },
      'renewed by whoever issued it',
    ],
  ] as const)('refuses %s, saying why', (_title, options, expected) => {
    const chosen = chooseServerTls({ tls: undefined, renew: false, ...options });
    expect(chosen.ok).toBe(false);
    if (!chosen.ok) expect(chosen.error).toContain(expected);
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.0.0.2', true],
    ['127.255.255.254', true],
    ['localhost', true],
    ['LOCALHOST', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['128.0.0.1', false],
    ['127.example.org', false],
    ['192.168.1.20', false],
    ['localhost.example.org', false],
  ])('%s → %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});
