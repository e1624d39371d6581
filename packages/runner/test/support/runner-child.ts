import { runTask } from '@sluice/runner';

/** `sluice exec` in a process of its own, for tests that signal the runner. */
const env = process.env;
runTask({
  apiUrl: env.SLUICE_API_URL ?? '',
  runToken: env.SLUICE_RUN_TOKEN ?? '',
  taskRunId: env.SLUICE_TASK_RUN_ID ?? '',
}).then(
  ({ exitCode }) => process.exit(exitCode),
  (error: Error) => {
    process.stderr.write(`sluice exec: ${error.message}\n`);
    process.exit(1);
  },
);
