/** The version of the `molf` command. */
export const CLI_VERSION = '0.1.0';

/** How the CLI names itself to the server (kept with the approvals it answers). */
export const CLI_CLIENT_NAME = `molf-cli/${CLI_VERSION}`;
