import { describe, expect, it } from 'vitest';
import { HEARTBEAT_MARKER, HEARTBEAT_OK, heartbeatPrompt, isEmptyChecklist } from './heartbeat.ts';

describe('the heartbeat checklist', () => {
  it('counts a file of only headings, comments and blank lines as nothing to check', () => {
    for (const text of ['', '  \n\n', '# Heartbeat\n\n## Checks\n', '<!-- add checks here -->\n# Title\n']) {
      expect(isEmptyChecklist(text), JSON.stringify(text)).toBe(true);
    }
    for (const text of ['- is the nightly build green?', '# Checks\n- disk space above 10 %']) {
      expect(isEmptyChecklist(text), JSON.stringify(text)).toBe(false);
    }
  });

  it('asks for the quiet answer when all is well and the marker when something needs attention', () => {
    const prompt = heartbeatPrompt('- is the nightly build green?\n');
    expect(prompt).toContain(`answer exactly ${HEARTBEAT_OK}`);
    expect(prompt).toContain(`begin your answer with ${HEARTBEAT_MARKER}`);
    expect(prompt).toContain('<checklist path="HEARTBEAT.md">\n- is the nightly build green?\n</checklist>');
  });
});
