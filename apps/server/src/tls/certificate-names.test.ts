import { describe, expect, it } from 'vitest';
import { defaultCertificateNames, safeParseCertificateName } from './certificate-names.ts';

describe('safeParseCertificateName', () => {
  it.each([
    ['molf.example.org', 'molf.example.org'],
    ['Molf.Example.org.', 'molf.example.org'],
    ['my-host', 'my-host'],
    ['*.example.org', '*.example.org'],
    ['192.168.1.20', '192.168.1.20'],
    ['fd00::1', 'fd00::1'],
    ['[fd00::1]', 'fd00::1'],
  ])('takes %s as %s', (text, expected) => {
    expect(safeParseCertificateName(text)).toEqual({ ok: true, value: expected });
  });

  it.each([
    '',
    'under_score.example',
    '-leading.example',
    'trailing-.example',
    'two..dots',
    '192.168.1.300',
    'http://molf.example',
    'molf.example:7600',
    '*',
    'a.*.example',
    `${'a'.repeat(64)}.example`,
    'space name',
  ])('refuses %j, saying what a name is', (text) => {
    const parsed = safeParseCertificateName(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain('neither an IP address nor a host name');
  });
});

describe('defaultCertificateNames', () => {
  it('names loopback, the machine and a specific listen address, then the extra names, once each', () => {
    expect(
      defaultCertificateNames({ host: '192.168.1.20', machineName: 'Box', extraNames: ['molf.lan', 'localhost'] }),
    ).toEqual(['localhost', '127.0.0.1', '::1', 'box', '192.168.1.20', 'molf.lan']);
  });

  it('leaves out a wildcard listen address and a machine name that is not a DNS name', () => {
    expect(defaultCertificateNames({ host: '0.0.0.0', machineName: 'my_box' })).toEqual([
      'localhost',
      '127.0.0.1',
      '::1',
    ]);
    expect(defaultCertificateNames({ host: '::', machineName: 'box' })).toEqual([
      'localhost',
      '127.0.0.1',
      '::1',
      'box',
    ]);
  });
});
