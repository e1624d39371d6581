/**
 * `sluice runner-install DIR` writes the self-contained runner binary into DIR
 * (the kubernetes init container). That binary is built with the docker and
 * kubernetes executors; until then the command refuses rather than install
 * something that would not run in an arbitrary image.
 */
export class RunnerInstallUnavailableError extends Error {
  readonly exitCode = 2;
  constructor() {
    super(
      'runner-install is not available yet: the self-contained runner binary arrives with the docker/kubernetes executor work',
    );
    this.name = 'RunnerInstallUnavailableError';
  }
}

export async function runnerInstall(targetDir: string): Promise<void> {
  if (!targetDir) throw new Error('runner-install: the target directory is required');
  throw new RunnerInstallUnavailableError();
}
