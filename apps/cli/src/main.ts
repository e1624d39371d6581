// The user CLI's commands (login, apply, run, executions, logs, cancel): a
// binary of its own, so they load neither the server nor the runner.
import { cliMain } from '@sluice/cli';

export function main(argv: string[]): Promise<number> {
  return cliMain(argv);
}

if (require.main === module) {
  // void: cliMain catches its own errors and resolves to the exit code.
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
