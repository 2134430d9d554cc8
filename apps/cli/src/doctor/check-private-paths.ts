import { stat } from 'node:fs/promises';
import type { DoctorCheck } from './doctor-check.ts';

/**
 * A directory holding sessions, tokens or saved connections: only its owner may enter it (mode
 * 0700, as Molf creates it) and that owner is the user running Molf. Not there yet is fine: it is
 * created private on first use.
 */
export async function checkPrivateDir(options: {
  id: string;
  /** What it is, for the line: `data directory`. */
  label: string;
  dir: string;
  /** Whose it must be. Default: this process's user. */
  uid?: number;
}): Promise<DoctorCheck> {
  const { id, label, dir } = options;
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { id, status: 'skipped', summary: `${label} ${dir}: not created yet (made private at first start)` };
    }
    return {
      id,
      status: 'error',
      summary: `${label} ${dir} cannot be read: ${(error as Error).message}`,
      fix: `check the path and its permissions: ls -ld ${dir}`,
    };
  }
  if (!info.isDirectory()) {
    return { id, status: 'error', summary: `${label} ${dir} is not a directory`, fix: `move ${dir} out of the way` };
  }
  const uid = options.uid ?? process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    return {
      id,
      status: 'error',
      summary: `${label} ${dir} belongs to user ${info.uid}, not to you (${uid})`,
      fix: `sudo chown -R ${uid} ${dir}`,
    };
  }
  const mode = info.mode & 0o777;
  const octal = mode.toString(8).padStart(4, '0');
  if ((mode & 0o077) !== 0) {
    return {
      id,
      status: 'error',
      summary: `${label} ${dir} is mode ${octal}: other users can ${(mode & 0o044) !== 0 ? 'read' : 'enter'} it`,
      fix: `chmod 700 ${dir}`,
    };
  }
  return { id, status: 'ok', summary: `${label} ${dir}: private (${octal}, yours)` };
}

/** A file holding secrets (the server config with API keys): readable by its owner only. */
export async function checkSecretFile(options: { id: string; label: string; file: string }): Promise<DoctorCheck> {
  const { id, label, file } = options;
  const mode = (await stat(file)).mode & 0o777;
  const octal = mode.toString(8).padStart(4, '0');
  if ((mode & 0o077) !== 0) {
    return {
      id,
      status: 'error',
      summary: `${label} ${file} is mode ${octal}: other users can read it`,
      fix: `chmod 600 ${file}`,
    };
  }
  return { id, status: 'ok', summary: `${label} ${file}: private (${octal})` };
}
