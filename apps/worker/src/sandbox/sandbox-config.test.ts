import { describe, expect, it } from 'vitest';
import { molfRuntimePaths, toSandboxSettings } from './sandbox-config.ts';

const context = { workdir: '/work/project', home: '/home/me', env: {} };

describe('the sandbox settings of a config', () => {
  it("default to off, network on, MCP servers inside, and hide Molf's directories: ~/.molf, the XDG ones, $MOLF_HOME and $MOLF_CLIENT_DIR", () => {
    const settings = toSandboxSettings(undefined, {
      ...context,
      env: { MOLF_HOME: '/srv/molf-data', MOLF_CLIENT_DIR: '/srv/molf-client', XDG_DATA_HOME: '/data/me' },
    });
    expect(settings).toMatchObject({ mode: 'off', network: true, mcp: true, writable: [] });
    expect(settings.hidden).toEqual([
      '/home/me/.molf',
      '/home/me/.config/molf',
      '/data/me/molf',
      '/home/me/.local/state/molf',
      '/srv/molf-data',
      '/srv/molf-client',
    ]);
    expect(settings.readOnly).toEqual([
      '/work/project/.molf',
      '/work/project/.git/hooks',
      '/work/project/.git/config',
      ...molfRuntimePaths(),
    ]);
  });

  it("keeps Molf's own Node and installation visible when they live under /tmp, which the sandbox replaces", () => {
    expect(molfRuntimePaths({ execPath: '/tmp/ci/node_modules/node/bin/node', installRoot: '/tmp/ci' })).toEqual([
      '/tmp/ci/node_modules/node/bin/node',
      '/tmp/ci',
    ]);
    expect(molfRuntimePaths({ execPath: '/usr/bin/node', installRoot: '/opt/molf' })).toEqual([]);
  });

  it('expands ~/ to the home and resolves relative paths against the workdir', () => {
    const settings = toSandboxSettings(
      { mode: 'on', hide: ['~/.ssh', 'secrets/token'], writable: ['~/.npm'] },
      context,
    );
    expect(settings.hidden).toEqual([
      '/home/me/.molf',
      '/home/me/.config/molf',
      '/home/me/.local/share/molf',
      '/home/me/.local/state/molf',
      '/home/me/.ssh',
      '/work/project/secrets/token',
    ]);
    expect(settings.writable).toEqual(['/home/me/.npm']);
  });

  it('refuses to hide the workdir itself when the sandbox is on, and ignores it when off', () => {
    expect(() => toSandboxSettings({ mode: 'required', hide: ['/work/project'] }, context)).toThrow(
      expect.objectContaining({ code: 'config_invalid' }),
    );
    expect(toSandboxSettings({ hide: ['/work/project'] }, context).mode).toBe('off');
  });
});
