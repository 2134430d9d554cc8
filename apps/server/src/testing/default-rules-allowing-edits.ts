import { readDefaultPermissionsText } from '@molf/permissions/default-file';

/** The `"*"` entry of the write_file and edit_file blocks of the default file, after their comments. */
const EDIT_BLOCK_ASK = /("(?:write_file|edit_file)": \{(?:\s*\/\/[^\n]*)*\s*"\*": )"ask"/g;

/**
 * The seeded default rules with write_file and edit_file allowed (their `"*": "allow"`, every other
 * rule of theirs kept): for tests of something else than the question a new worker asks before an
 * edit, such as what an allowed write records or what a shell line writing a file offers.
 */
export function defaultRulesAllowingEdits(): string {
  const text = readDefaultPermissionsText();
  const matches = text.match(EDIT_BLOCK_ASK) ?? [];
  if (matches.length !== 2) {
    throw new Error(
      `the default rules no longer start write_file and edit_file with "*": "ask" (${matches.length} found)`,
    );
  }
  return text.replace(EDIT_BLOCK_ASK, '$1"allow"');
}
