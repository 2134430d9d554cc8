/** Version of the Molf worker, sent at registration. */
export const WORKER_VERSION = '0.1.0';
