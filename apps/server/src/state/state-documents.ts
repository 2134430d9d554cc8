/**
 * The server's small state, kept as whole documents by name — `credentials.json`,
 * `pairing-codes.json`, `cron/jobs.json`, `workers/{id}/permissions.jsonc`… — in the data directory
 * (one file each) or in PostgreSQL (one row each, shared by every instance). Stores read, change and
 * watch their documents through this, whatever keeps them.
 */
export type StateDocuments = {
  /** Names a document for people: its file's path, or where it is in the database. */
  where(name: string): string;
  /** The document's text, read now; undefined when there is none. */
  read(name: string): Promise<string | undefined>;
  /** The document's bytes, read now; undefined when there is none. */
  readBytes(name: string): Promise<Buffer | undefined>;
  /**
   * The text as this process knows it, without waiting, with a version that changes whenever it
   * does: a file is read again when its size or time changed; the database's copy is kept current
   * by its announcements (another instance's write shows after a moment: read it under `lock` to be sure).
   */
  known(name: string): { text: string | undefined; version: string };
  /** Replaces the document whole: a crash leaves the old one or the new one, never a mix. */
  write(name: string, content: string | Uint8Array): Promise<void>;
  /** Creates the document unless one exists (never replaces one); returns whether it did. */
  create(name: string, content: string | Uint8Array): Promise<boolean>;
  /** Deletes the document; nothing when there is none. */
  remove(name: string): Promise<void>;
  /**
   * Runs `task` holding the document's lock against every process and instance that shares the
   * documents, so that a read-change-write sees the last write and loses none. Waiting for about
   * 20 s fails with `busy`.
   */
  lock<T>(name: string, task: () => Promise<T>): Promise<T>;
  /** The names of the documents whose name starts with `prefix`, sorted. */
  list(prefix: string): Promise<string[]>;
  /**
   * Calls `onChange` after the document changed (written here, by another process, or by another
   * instance), once changes have settled; returns the function that stops watching.
   */
  watch(name: string, onChange: () => void): () => void;
  /**
   * Calls `onChange` with the name of each document under `prefix` that changed, appeared or went
   * away (here, in another process, or on another instance), once changes have settled.
   */
  watchPrefix(prefix: string, onChange: (name: string) => void): () => void;
  /** Stops watching and listening. */
  close(): Promise<void>;
};
