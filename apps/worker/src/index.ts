export { createWorker, type MolfWorker, type WorkerConfig } from './create-worker.ts';
export { echoTool } from './tools/echo.ts';
export { defineToolHandler, type ToolContext, type ToolHandler } from './tools/tool-handler.ts';
export { validateWorkdir } from './validate-workdir.ts';
export { WORKER_VERSION } from './version.ts';
