export { type FakeLlm, type FakeRequest, type FakeTurn, startFakeLlm } from './fake-llm-server.ts';
export { type FixtureMcpHttpServer, startFixtureMcpHttpServer } from './fixture-mcp-http-server.ts';
export { FIXTURE_MCP_SERVER } from './fixture-mcp-server-path.ts';
