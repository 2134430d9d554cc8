import { describe, expect, it } from 'vitest';
import { molfDirectories, resolveMolfPaths } from './molf-paths.ts';

const home = '/home/me';

describe("Molf's paths", () => {
  it('follow the XDG defaults on Linux when nothing is set', () => {
    expect(resolveMolfPaths({ env: {}, home, platform: 'linux' })).toEqual({
      layout: 'xdg',
      configDir: '/home/me/.config/molf',
      dataDir: '/home/me/.local/share/molf',
      stateDir: '/home/me/.local/state/molf',
      logsDir: '/home/me/.local/state/molf/logs',
      configFile: '/home/me/.config/molf/config.jsonc',
      clientDir: '/home/me/.local/state/molf',
      chatHistoryFile: '/home/me/.local/state/molf/chat-history.jsonl',
      legacyDir: '/home/me/.molf',
    });
  });

  it('follow XDG_CONFIG_HOME, XDG_DATA_HOME and XDG_STATE_HOME, ignoring a relative or empty one', () => {
    const paths = resolveMolfPaths({
      env: { XDG_CONFIG_HOME: '/cfg', XDG_DATA_HOME: 'relative/data', XDG_STATE_HOME: '/state' },
      home,
      platform: 'linux',
    });
    expect(paths).toMatchObject({
      configFile: '/cfg/molf/config.jsonc',
      dataDir: '/home/me/.local/share/molf',
      logsDir: '/state/molf/logs',
      clientDir: '/state/molf',
      chatHistoryFile: '/state/molf/chat-history.jsonl',
    });
    expect(resolveMolfPaths({ env: { XDG_DATA_HOME: '' }, home, platform: 'linux' }).dataDir).toBe(
      '/home/me/.local/share/molf',
    );
  });

  it('put config, data, logs and saved connections in $MOLF_HOME, as before, with $MOLF_CLIENT_DIR moving the connections alone', () => {
    expect(
      resolveMolfPaths({ env: { MOLF_HOME: '/srv/molf', XDG_DATA_HOME: '/data' }, home, platform: 'linux' }),
    ).toEqual({
      layout: 'single',
      configDir: '/srv/molf',
      dataDir: '/srv/molf',
      stateDir: '/srv/molf',
      logsDir: '/srv/molf/logs',
      configFile: '/srv/molf/config.jsonc',
      clientDir: '/srv/molf',
      chatHistoryFile: '/srv/molf/chat-history.jsonl',
      legacyDir: '/home/me/.molf',
    });
    expect(
      resolveMolfPaths({ env: { MOLF_HOME: '/srv/molf', MOLF_CLIENT_DIR: '/srv/client' }, home, platform: 'linux' })
        .clientDir,
    ).toBe('/srv/client');
  });

  it('take an explicit --data-dir over $MOLF_HOME, without moving the saved connections', () => {
    const paths = resolveMolfPaths({ env: { MOLF_HOME: '/srv/molf' }, home, platform: 'linux', dataDir: '/tmp/d' });
    expect(paths).toMatchObject({ dataDir: '/tmp/d', configFile: '/tmp/d/config.jsonc', logsDir: '/tmp/d/logs' });
    expect(paths.clientDir).toBe('/srv/molf');
    expect(resolveMolfPaths({ env: {}, home, platform: 'linux', dataDir: '/tmp/d' }).clientDir).toBe(
      '/home/me/.local/state/molf',
    );
  });

  it('keep ~/.molf for everything on systems other than Linux', () => {
    expect(resolveMolfPaths({ env: { XDG_DATA_HOME: '/data' }, home, platform: 'darwin' })).toMatchObject({
      layout: 'single',
      configFile: '/home/me/.molf/config.jsonc',
      dataDir: '/home/me/.molf',
      logsDir: '/home/me/.molf/logs',
      clientDir: '/home/me/.molf',
    });
  });

  it("list every directory of Molf's for the sandbox to hide", () => {
    expect(
      molfDirectories({ env: { MOLF_HOME: '/srv/molf', XDG_STATE_HOME: '/state' }, home, platform: 'linux' }),
    ).toEqual(['/home/me/.molf', '/home/me/.config/molf', '/home/me/.local/share/molf', '/state/molf', '/srv/molf']);
  });
});
