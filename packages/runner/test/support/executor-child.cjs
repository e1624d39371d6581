// A process executor in a process of its own, for the test that kills it with -9.
// Run as `node -r ./ts-register.cjs executor-child.cjs '<runs>'`, where runs is a
// JSON list of {apiUrl, taskRunId, runToken}. It starts the first task run on a
// fresh runner, hands the second to the standby that start left behind, prints
// the pids as one JSON line — `runners` (one per task run) and `standby` (the one
// waiting for a third) — and idles until killed. CommonJS on purpose: the runner
// package does not depend on @sluice/executors; ts-register resolves it to source.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
// Test only: the runner's src never imports the executor side (layer:runner, eslint.config.mjs).
// eslint-disable-next-line @nx/enforce-module-boundaries
const { ProcessExecutor, noopLogger } = require('@sluice/executors');

const runs = JSON.parse(process.argv[2] || '[]');
const executor = new ProcessExecutor({
  runnerCommand: [
    process.execPath,
    '-r',
    join(__dirname, 'ts-register.cjs'),
    join(__dirname, 'exec-child.ts'),
    'exec',
  ],
  env: process.env,
  standbyRunners: 1,
});

const claimed = (run) => ({
  taskRunId: run.taskRunId,
  executionId: 'ex-test',
  taskId: 'task',
  attempt: 1,
  fence: 3,
  executor: { type: 'process', pool: 'default' },
  timeoutMs: 60_000,
  task: { type: 'command', command: ['true'] },
  runToken: run.runToken,
});

/** `--standby` children of this process. */
function standbyChildren() {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        // "pid (comm) state ppid ...": comm may hold spaces, so split after ')'.
        const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
        return ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('--standby');
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function main() {
  const runners = [];
  for (const run of runs) {
    // The process executor uses only the runner API URL and the log of its context.
    const ctx = { protocol: null, runnerApiUrl: run.apiUrl, log: noopLogger };
    const handle = await executor.start(claimed(run), ctx);
    runners.push(Number(handle.externalRef.slice('pid:'.length)));
  }
  const standby = standbyChildren().filter((pid) => !runners.includes(pid));
  process.stdout.write(`${JSON.stringify({ runners, standby })}\n`);
  setInterval(() => undefined, 60_000);
}

main().catch((error) => {
  process.stderr.write(`executor-child: ${error.stack}\n`);
  process.exit(1);
});
