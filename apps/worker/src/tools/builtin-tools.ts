import { echoTool } from './echo.ts';
import { editFileTool } from './edit-file.ts';
import { globTool } from './glob-files.ts';
import { grepTool } from './grep-files.ts';
import { readFileTool } from './read-file.ts';
import { shellExecTool } from './shell-exec.ts';
import type { ToolHandler } from './tool-handler.ts';
import { writeFileTool } from './write-file.ts';

/** The tools every worker offers: the six built-ins, plus the diagnostic echo for link tests and the benchmark. */
export const builtinTools: ToolHandler[] = [
  echoTool,
  shellExecTool,
  readFileTool,
  writeFileTool,
  editFileTool,
  globTool,
  grepTool,
];
