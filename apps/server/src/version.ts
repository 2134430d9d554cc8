/** Version of the Molf server reported to workers and clients. */
export const SERVER_VERSION = '0.1.0';
