// Where the built page is (`pnpm install` builds it): the server serves this directory.
import { fileURLToPath } from 'node:url';

/** The directory of the built web client, with `index.html` at its top. */
export const webDistDir = fileURLToPath(new URL('./dist/', import.meta.url));
