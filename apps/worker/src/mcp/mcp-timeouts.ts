/** Bounds of one MCP server's start, tool listing and tool call. */
export const MCP_TIMEOUTS = {
  connectMs: 30_000,
  listToolsMs: 10_000,
  callMs: 60_000,
} as const;
