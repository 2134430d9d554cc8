import { describe, expect, it } from 'vitest';
import { startWebStack } from './web-stack.ts';

describe('logging the web client in with a pairing code', () => {
  it('trades a code from molf pair for a token of its own, named for the browser, with the code’s role', async () => {
    await using web = await startWebStack();
    const { code } = await web.server.pairing.create({ role: 'operator' });
    const { page, errors } = await web.newPage();
    await page.goto(web.server.httpUrl);

    // A typo first: the server's sentence, and the form stays.
    await page.getByTestId('pairing-code').fill('ZZZZ-ZZZZ');
    await page.getByRole('button', { name: 'Pair this browser' }).click();
    await page.getByTestId('pairing-problem').waitFor();
    await expect(page.getByTestId('pairing-problem').textContent()).resolves.toMatch(/code/i);

    // Typed as a person does: lower case, no dash.
    await page.getByTestId('pairing-code').fill(code.replace('-', '').toLowerCase());
    await page.getByRole('button', { name: 'Pair this browser' }).click();
    await page.getByTestId('new-session').waitFor();
    await expect(page.getByTestId('role').textContent()).resolves.toBe('operator');

    const paired = web.server.credentials.list().filter((credential) => credential.role === 'operator');
    expect(paired).toHaveLength(1);
    expect(paired[0]?.label).toMatch(/\(web\)$/);
    // Used once: the same code again is refused.
    await expect(
      web.server.pairing.redeem({ code: code.replace('-', ''), kind: 'client', name: 'again' }),
    ).resolves.toMatchObject({ type: 'used' });
    // The browser notes the typo's 401 itself; nothing else went wrong.
    expect(errors.filter((line) => !line.includes('status of 401'))).toEqual([]);
  });
});
