import { describe, expect, it } from 'vitest';
import { toAddressKey } from './address-key.ts';

describe('address keys for pairing limits', () => {
  it('keeps an IPv4 address, loopback included', () => {
    expect(toAddressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(toAddressKey('127.0.0.1')).toBe('127.0.0.1');
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(toAddressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(toAddressKey('::ffff:c000:0207')).toBe('192.0.2.7');
    expect(toAddressKey('::FFFF:127.0.0.1')).toBe('127.0.0.1');
  });

  it('counts IPv6 addresses by their /64, however they are written', () => {
    const key = toAddressKey('2001:db8:0:1::5');
    expect(key).toBe('2001:db8:0:1::/64');
    expect(toAddressKey('2001:0db8:0000:0001:ffff:1:2:3')).toBe(key);
    expect(toAddressKey('2001:db8::1:0:0:0:9')).toBe(key);
    expect(toAddressKey('2001:db8:0:2::5')).not.toBe(key);
    expect(toAddressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(toAddressKey('::1')).toBe('0:0:0:0::/64');
  });

  it('counts what is not an address under one key', () => {
    expect(toAddressKey(undefined)).toBe('unknown');
    expect(toAddressKey('not an address')).toBe('unknown');
  });
});
