import { fstatSync } from 'node:fs';
import { parseRunnerEnv } from '@sluice/config';
import { runTask } from './run-task';

/**
 * When stdin is a pipe (the process executor keeps one open and never writes
 * to it), its end means the instance died, even by kill -9. In a container or
 * a terminal stdin is not a pipe, and nothing is watched.
 */
function watchParentPipe(): Promise<void> | undefined {
  let isPipe = false;
  try {
    // Node's 'pipe' stdio is a socket pair; a shell's pipe is a FIFO.
    const stat = fstatSync(0);
    isPipe = stat.isFIFO() || stat.isSocket();
  } catch {
    return undefined;
  }
  if (!isPipe) return undefined;
  return new Promise((resolve) => {
    process.stdin.on('end', () => resolve());
    process.stdin.on('close', () => resolve());
    process.stdin.on('error', () => resolve());
    process.stdin.resume();
  });
}

export interface ExecIo {
  env: Record<string, string | undefined>;
  stderr: (text: string) => void;
}

/**
 * `sluice exec`, shared by every binary that carries the runner (the runner
 * app and the server app, whose process executor starts itself as the
 * runner). Exit code: the task's own; 1 when the runner failed; 2 when its
 * three variables are missing or invalid.
 */
export async function runExecCommand(io: ExecIo): Promise<number> {
  let env;
  try {
    env = parseRunnerEnv(io.env);
  } catch (error) {
    io.stderr(`sluice exec: ${(error as Error).message}\n`);
    return 2;
  }
  try {
    const { exitCode } = await runTask({
      ...env,
      env: io.env,
      log: (message) => io.stderr(`sluice exec: ${message}\n`),
      parentGone: watchParentPipe(),
    });
    return exitCode;
  } catch (error) {
    io.stderr(`sluice exec: ${(error as Error).message}\n`);
    return 1;
  }
}
