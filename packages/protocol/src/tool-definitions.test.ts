import { describe, expect, it } from 'vitest';
import { ToolCallIdSchema } from './ids.ts';
import {
  DEFAULT_TOOL_TIMEOUT_MS,
  resolveCallTimeout,
  ToolDescriptorSchema,
  toolDefinitions,
  toToolDescriptor,
} from './tool-definitions.ts';

describe('tool definitions', () => {
  it('offers the reference names and parameters as JSON Schema', () => {
    const shell = toToolDescriptor(toolDefinitions.shell_exec);
    expect(ToolDescriptorSchema.parse(shell)).toBeTruthy();
    expect(shell.inputSchema).toMatchObject({
      type: 'object',
      required: ['command'],
      properties: { command: { type: 'string' }, cwd: { type: 'string' }, timeout: { type: 'integer' } },
    });
    expect(Object.keys(toToolDescriptor(toolDefinitions.edit_file).inputSchema.properties as object)).toEqual([
      'path',
      'oldString',
      'newString',
      'replaceAll',
      'edits',
    ]);
  });

  it("takes a call's deadline from its own timeout argument", () => {
    expect(resolveCallTimeout('shell_exec', { command: 'sleep 200', timeout: 300_000 })).toBe(300_000);
    expect(resolveCallTimeout('shell_exec', { command: 'ls' })).toBe(DEFAULT_TOOL_TIMEOUT_MS);
    expect(resolveCallTimeout('some_mcp_tool', { timeout: 5 })).toBe(DEFAULT_TOOL_TIMEOUT_MS);
  });

  it('ignores a timeout argument that is not valid', () => {
    expect(resolveCallTimeout('shell_exec', { command: 'ls', timeout: -1 })).toBe(DEFAULT_TOOL_TIMEOUT_MS);
    expect(resolveCallTimeout('shell_exec', { command: 'ls', timeout: 10 * 60 * 60_000 })).toBe(
      DEFAULT_TOOL_TIMEOUT_MS,
    );
  });

  it('accepts only file-name-safe tool call ids', () => {
    expect(ToolCallIdSchema.safeParse('call_abc-123').success).toBe(true);
    expect(ToolCallIdSchema.safeParse('../../etc/passwd').success).toBe(false);
    expect(ToolCallIdSchema.safeParse('').success).toBe(false);
  });
});
