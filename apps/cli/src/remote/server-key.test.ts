import { describe, expect, it } from 'vitest';
import { serverKey } from './server-key.ts';

describe('serverKey: the name a server is pinned and logged in under', () => {
  it.each([
    ['wss://Example.org', 'wss://example.org:443'],
    ['wss://example.org:443/', 'wss://example.org:443'],
    ['wss://example.org:7600/some/path?x=1#y', 'wss://example.org:7600'],
    ['wss://[0:0:0:0:0:0:0:1]:7600', 'wss://[::1]:7600'],
    ['wss://0x7f.1:7600', 'wss://127.0.0.1:7600'],
    ['ws://127.0.0.1', 'ws://127.0.0.1:80'],
  ])('names %s as %s', (url, key) => {
    expect(serverKey(url)).toBe(key);
  });

  it('keeps a trailing dot and another scheme apart: a pin is never used for another name', () => {
    expect(serverKey('wss://example.org.:7600')).not.toBe(serverKey('wss://example.org:7600'));
    expect(serverKey('ws://example.org:7600')).not.toBe(serverKey('wss://example.org:7600'));
  });

  it('refuses a URL with a user name or password, naming the server it would really reach', () => {
    expect(() => serverKey('wss://molf.example.org@evil.example:7600')).toThrow(
      /wss:\/\/molf\.example\.org@evil\.example:7600 has a user name or password before the host.*the server it names is evil\.example, port 7600/,
    );
    expect(() => serverKey('wss://user:secret@molf.example.org:7600')).toThrow(/has a user name or password/);
    expect(() => serverKey('wss://user:secret@molf.example.org:7600')).not.toThrow(/secret/);
  });

  it('refuses what is not a ws:// or wss:// URL', () => {
    expect(() => serverKey('molf.example.org:7600')).toThrow(/not a server URL|not a URL/);
    expect(() => serverKey('https://molf.example.org')).toThrow(/not a server URL/);
  });
});
