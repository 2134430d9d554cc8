import { describe, expect, it } from 'vitest';
import { createOriginPolicy, safeParseOrigin } from './origin-policy.ts';

describe('createOriginPolicy', () => {
  const loopback = createOriginPolicy({ host: '127.0.0.1', port: 7600, interfaceAddresses: [] });
  const configured = createOriginPolicy({
    host: '127.0.0.1',
    port: 7600,
    allowedOrigins: ['https://app.example', 'http://dev.example:3000'],
    interfaceAddresses: [],
  });
  const everywhere = createOriginPolicy({
    host: '0.0.0.0',
    port: 7600,
    interfaceAddresses: ['127.0.0.1', '192.168.1.20', '::1', 'fe80::1'],
  });
  const named = createOriginPolicy({ host: 'molf.lan', port: 443, interfaceAddresses: [] });

  it.each([
    [loopback, undefined, 'allow'],
    [loopback, 'http://127.0.0.1:7600', 'allow'],
    [loopback, 'https://127.0.0.1:7600', 'allow'],
    [loopback, 'http://localhost:7600', 'allow'],
    [loopback, 'http://LOCALHOST:7600', 'allow'],
    [loopback, 'http://[::1]:7600', 'allow'],
    [loopback, 'http://127.0.0.1:7601', 'deny'],
    [loopback, 'http://127.0.0.1', 'deny'],
    [loopback, 'http://evil.example:7600', 'deny'],
    [loopback, 'http://localhost.evil.example:7600', 'deny'],
    [loopback, 'null', 'deny'],
    [loopback, '', 'deny'],
    [loopback, 'not a url', 'deny'],
    [loopback, 'file:///etc/passwd', 'deny'],
    [loopback, 'ws://127.0.0.1:7600', 'deny'],
    [loopback, 'http://127.0.0.1:7600/path', 'deny'],
    [loopback, 'http://user@127.0.0.1:7600', 'deny'],
    [configured, 'https://app.example', 'allow'],
    [configured, 'https://app.example:443', 'allow'],
    [configured, 'http://dev.example:3000', 'allow'],
    [configured, 'http://app.example', 'deny'],
    [configured, 'https://app.example:8443', 'deny'],
    [configured, 'http://localhost:7600', 'allow'],
    [everywhere, 'http://192.168.1.20:7600', 'allow'],
    [everywhere, 'http://localhost:7600', 'allow'],
    [everywhere, 'http://[::1]:7600', 'allow'],
    [everywhere, 'http://192.168.1.21:7600', 'deny'],
    [everywhere, 'http://evil.example:7600', 'deny'],
    [named, 'https://molf.lan', 'allow'],
    [named, 'http://molf.lan:443', 'allow'],
    [named, 'https://localhost', 'deny'],
  ] as const)('%#: origin %s → %s', (policy, origin, expected) => {
    expect(policy(origin).type).toBe(expected);
  });

  it('says why it allowed', () => {
    expect(configured(undefined)).toEqual({ type: 'allow', reason: 'no_origin' });
    expect(configured('http://localhost:7600')).toEqual({ type: 'allow', reason: 'own' });
    expect(configured('https://app.example')).toEqual({ type: 'allow', reason: 'configured' });
  });
});

describe('safeParseOrigin', () => {
  it.each([
    ['https://app.example', 'https://app.example'],
    ['https://App.Example:443/', 'https://app.example'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
  ])('normalises %s to %s', (text, origin) => {
    expect(safeParseOrigin(text)).toEqual({ ok: true, value: origin });
  });

  it.each([
    'app.example',
    'https://app.example/app',
    'https://app.example?x=1',
    'https://app.example#x',
    'chrome-extension://abc',
    '*',
  ])('refuses %s, saying what an origin is', (text) => {
    const parsed = safeParseOrigin(text);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toContain('http(s)://host[:port]');
  });
});
