/**
 * The exit code of a usage error: an unknown command or option, a missing or invalid argument (as
 * commander finds them, whose own code would be 1), or one a command finds itself (`command.error`
 * with this code). 1 stays for a command that ran and failed.
 */
export const USAGE_EXIT_CODE = 2;
