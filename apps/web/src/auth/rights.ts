import { type Role, roleAllows } from '@molf/protocol';

/**
 * What the page offers, by the role of the credential it logged in with. The server checks every
 * call again; the page only leaves out what would be refused, and says who can do it.
 */
export type Rights = {
  /** Make, prompt, stop, rename and delete sessions; answer approvals; run and change scheduled prompts. */
  operate: boolean;
  /** Answer "always" (it saves a rule), revoke grants: an admin's. */
  administer: boolean;
};

export function rightsOf(role: Role): Rights {
  return { operate: roleAllows(role, 'operator'), administer: roleAllows(role, 'admin') };
}
