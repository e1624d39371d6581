// One executor process of bench/executor-api.ts: registers, waits for "go" on
// stdin, then loops claim(limit 1) → complete over HTTP until the queue is
// empty, and prints {"jobs","startedAt","endedAt"} as its last line.
import { ExecutorApiClient } from '@sluice/protocol';

async function main(): Promise<void> {
  const [baseUrl, token, id] = process.argv.slice(2) as [string, string, string];
  const client = new ExecutorApiClient({ baseUrl, token });
  await client.register({
    instanceId: id,
    type: 'docker-executor',
    version: 'bench',
    capacity: { process: 1 },
    pools: ['default'],
    executors: ['process'],
    resourceDefaults: {},
  });
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  const startedAt = Date.now();
  let jobs = 0;
  for (;;) {
    const [run] = await client.claim({
      instanceId: id,
      executorTypes: ['process'],
      pools: ['default'],
      limit: 1,
    });
    if (!run) break;
    await client.complete({ taskRunId: run.taskRunId, fence: run.fence, state: 'SUCCEEDED', exitCode: 0 });
    jobs += 1;
  }
  process.stdout.write(`${JSON.stringify({ jobs, startedAt, endedAt: Date.now() })}\n`);
  client.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
