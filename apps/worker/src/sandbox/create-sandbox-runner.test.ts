import { execFileSync } from 'node:child_process';
import { closeSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openChecked } from './create-sandbox-runner.ts';
import { tempDir } from './sandbox-test-kit.ts';

describe('the descriptors bwrap binds from', () => {
  it('opens a directory or file that is where it was planned', async () => {
    await using dir = await tempDir('molf-runner-');
    await mkdir(join(dir.path, '.git'));
    await writeFile(join(dir.path, '.git', 'config'), '[core]\n');
    for (const [path, directory] of [
      [join(dir.path, '.git'), true],
      [join(dir.path, '.git', 'config'), false],
    ] as const) {
      const fd = openChecked(path, directory);
      expect(fd).toBeTypeOf('number');
      closeSync(fd as number);
    }
    expect(openChecked(join(dir.path, 'gone'), true)).toBeUndefined();
  });

  it('refuses a path that leads elsewhere now (a link, here or above it) and a FIFO, without hanging', async () => {
    await using dir = await tempDir('molf-runner-');
    await mkdir(join(dir.path, 'real', 'hooks'), { recursive: true });
    await symlink(join(dir.path, 'real'), join(dir.path, '.git'));
    await symlink(join(dir.path, 'real', 'hooks'), join(dir.path, 'hooks-link'));
    await writeFile(join(dir.path, 'real', 'file'), 'x');
    execFileSync('mkfifo', [join(dir.path, 'fifo')]);
    for (const [path, directory] of [
      [join(dir.path, '.git', 'hooks'), true],
      [join(dir.path, 'hooks-link'), true],
      [join(dir.path, 'fifo'), false],
      // A pinned directory must be one.
      [join(dir.path, 'real', 'file'), true],
    ] as const) {
      expect(() => openChecked(path, directory), path).toThrow(expect.objectContaining({ code: 'sandbox_failed' }));
    }
  });
});
