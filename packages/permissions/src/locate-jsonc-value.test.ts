import { describe, expect, it } from 'vitest';
import { locateJsoncValue } from './locate-jsonc-value.ts';

const text = '{\n  // limits\n  "agent": { "maxSteps": 0, },\n  "keys": { "openai": "sk" }\n}\n';

describe('locating a value in a JSONC text', () => {
  it('finds where a nested value starts, past comments and trailing commas', () => {
    expect(locateJsoncValue(text, ['agent', 'maxSteps'])).toEqual({ line: 3, column: 26 });
  });

  it("finds a property's name with key", () => {
    expect(locateJsoncValue(text, ['keys'], { key: true })).toEqual({ line: 4, column: 3 });
  });

  it('falls back to the nearest object on the path for a missing property, and gives nothing for a broken text', () => {
    expect(locateJsoncValue(text, ['agent', 'maxQueue'])).toEqual({ line: 3, column: 12 });
    expect(locateJsoncValue('{ "a": ', ['a'])).toEqual({ line: 1, column: 1 });
    expect(locateJsoncValue('', ['a'])).toBeUndefined();
  });
});
