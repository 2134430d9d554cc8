import { constants } from 'node:fs';

/**
 * Open flags for reading what should be a regular file, without waiting: if it is a FIFO (or
 * became one since it was checked), open() returns at once and reads see end of file, instead of
 * blocking one of libuv's few threads until a writer comes. A regular file reads as usual. (No
 * O_NONBLOCK on Windows, which has no FIFOs.)
 */
export const NO_WAIT_READ_FLAG = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
