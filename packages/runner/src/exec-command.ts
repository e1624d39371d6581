import { parseRunnerEnv } from '@sluice/config';
import { runTask } from './run-task';

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
    });
    return exitCode;
  } catch (error) {
    io.stderr(`sluice exec: ${(error as Error).message}\n`);
    return 1;
  }
}
