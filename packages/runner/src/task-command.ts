import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { RunnerTaskSpec, ScriptInterpreter } from '@sluice/protocol';

export interface TaskCommand {
  argv: [string, ...string[]];
  /** For a script task: the file to write the script body to before spawning. */
  scriptFile: { path: string; body: string } | null;
}

const SCRIPT_EXTENSION: Record<ScriptInterpreter, string> = {
  bash: 'sh',
  sh: 'sh',
  python: 'py',
  node: 'js',
  bun: 'ts',
};

/**
 * A command or a script; a connector's command line is connectorCommand's
 * (connector-task.ts), a sync's endpoints are started by sync/ (endpoint.ts).
 */
export type ProgramTask = Exclude<RunnerTaskSpec['task'], { type: 'connector' } | { type: 'sync' }>;

/** A dot-file, so it does not collide with the snapshot's files in the work dir. */
const SCRIPT_BASENAME = '.sluice-task';

/**
 * What to spawn for a task. A script lives in the work dir, beside the
 * snapshot's files, so relative imports from the script find them. Python goes
 * through `uv run --script` (PEP 723 inline dependencies) when uv is on PATH.
 */
export function resolveTaskCommand(task: ProgramTask, workDir: string, path: string): TaskCommand {
  if (task.type === 'command') {
    const [file, ...args] = task.command;
    return { argv: [file!, ...args], scriptFile: null };
  }
  const scriptPath = join(workDir, `${SCRIPT_BASENAME}.${SCRIPT_EXTENSION[task.interpreter]}`);
  const scriptFile = { path: scriptPath, body: task.script };
  switch (task.interpreter) {
    case 'python':
      return {
        argv: findOnPath('uv', path) ? ['uv', 'run', '--script', scriptPath] : ['python3', scriptPath],
        scriptFile,
      };
    case 'bash':
    case 'sh':
    case 'node':
    case 'bun':
      return { argv: [task.interpreter, scriptPath], scriptFile };
  }
}

/** The error of a task that could not be started, in words a flow author understands. */
export function describeSpawnError(
  task: RunnerTaskSpec['task'],
  file: string,
  error: NodeJS.ErrnoException,
): string {
  const what =
    task.type === 'script' ? 'interpreter' : task.type === 'connector' ? 'connector command' : 'command';
  switch (error.code) {
    case 'ENOENT':
      return `${what} not found: ${file} is not on PATH`;
    case 'EACCES':
      return `${what} ${file} cannot be executed: permission denied`;
    default:
      return `${what} ${file} could not be started: ${error.code ?? error.message}`;
  }
}

function findOnPath(name: string, path: string): boolean {
  return path
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}
