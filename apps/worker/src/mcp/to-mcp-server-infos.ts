import { MAX_MCP_REASON_CHARS, MAX_MCP_SERVERS, type McpServerInfo, type McpServerStatus } from '@molf/protocol';
import type { McpServerState } from './mcp-manager.ts';

const STATUS: Record<McpServerState['status'], McpServerStatus> = {
  connecting: 'connecting',
  connected: 'connected',
  offline: 'offline',
  'awaiting approval': 'awaiting_approval',
  denied: 'denied',
  disabled: 'disabled',
  invalid: 'invalid',
};

/** Longest server name reported (a longer one in `.mcp.json` is cut, with an ellipsis). */
const MAX_NAME_CHARS = 128;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The MCP servers' states as the server is told them: within the wire's caps (a long error, a
 * very long name and servers beyond MAX_MCP_SERVERS are cut), tools by the names the model sees.
 */
export function toMcpServerInfos(states: readonly McpServerState[]): McpServerInfo[] {
  return states.slice(0, MAX_MCP_SERVERS).map((state) => ({
    name: cut(state.name, MAX_NAME_CHARS),
    type: state.type,
    status: STATUS[state.status],
    ...(state.reason === undefined ? {} : { reason: cut(state.reason, MAX_MCP_REASON_CHARS) }),
    tools: state.offered,
  }));
}
