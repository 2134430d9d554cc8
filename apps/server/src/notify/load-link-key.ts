import { randomBytes } from 'node:crypto';
import { MolfError } from '@molf/protocol';
import type { StateDocuments } from '../state/index.ts';

/** The document that holds the key. */
export const LINK_KEY_DOCUMENT = 'secrets/link-key';
const KEY_BYTES = 32;

/**
 * The key that signs approval links: 32 random bytes in the `secrets/link-key` document (a 0600
 * file in a 0700 directory of the data dir, or a row of the database, the same for every
 * instance), made at the first start that needs it and kept, so links sent before a restart, or
 * by another instance, still verify (their approvals, which do not survive a restart, then answer
 * 410). Two servers starting at once make one key: the document is created only when there is
 * none, never replaced.
 */
export async function loadLinkKey(documents: StateDocuments): Promise<Buffer> {
  const where = documents.where(LINK_KEY_DOCUMENT);
  let key = await documents.readBytes(LINK_KEY_DOCUMENT);
  if (key === undefined) {
    try {
      await documents.create(LINK_KEY_DOCUMENT, randomBytes(KEY_BYTES));
    } catch (error) {
      throw new MolfError('internal', `cannot create the link key ${where}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    // Ours, or the one another server made first.
    key = await documents.readBytes(LINK_KEY_DOCUMENT);
    if (key === undefined) {
      throw new MolfError('internal', `the link key ${where} was removed as it was being made: restart`);
    }
  }
  if (key.length !== KEY_BYTES) {
    throw new MolfError(
      'config_invalid',
      `the link key ${where} is damaged (${key.length} bytes, expected ${KEY_BYTES}): delete it and restart; links already sent stop working`,
    );
  }
  return key;
}
