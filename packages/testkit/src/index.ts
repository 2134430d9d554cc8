export { type FakeLlm, type FakeRequest, type FakeTurn, startFakeLlm } from './fake-llm-server.ts';
export { findTestProcesses, TEST_RUN_ENV, type TestProcess } from './find-test-processes.ts';
export { type FixtureMcpHttpServer, startFixtureMcpHttpServer } from './fixture-mcp-http-server.ts';
export { FIXTURE_MCP_SERVER } from './fixture-mcp-server-path.ts';
export { isProcessAlive } from './is-process-alive.ts';
export {
  createScratchDatabase,
  findPostgresPrograms,
  type PostgresCluster,
  type PostgresClusterOptions,
  startPostgresCluster,
} from './postgres-cluster.ts';
export { STOP_GRACE_MS, stopProcessGroup } from './stop-process-group.ts';
export { SYSTEM_CHROMIUM } from './system-chromium.ts';
export { startTcpBalancer, type TcpBalancer } from './tcp-balancer.ts';
export { type InterceptorTarget, startTlsInterceptor, type TlsInterceptor } from './tls-interceptor.ts';
