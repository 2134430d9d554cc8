export { type FakeLlm, type FakeRequest, type FakeTurn, startFakeLlm } from './fake-llm-server.ts';
