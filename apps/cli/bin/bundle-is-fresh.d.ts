/** True when apps/cli/dist holds a build and no file it was built from changed since. */
export function bundleIsFresh(): boolean;
