import { randomUUID } from 'node:crypto';
import { describeExecutorProtocolContract, InMemoryExecutorProtocol } from '../src';

// The fake that instance and executor tests use keeps the rules both real bindings keep.
describeExecutorProtocolContract('the in-memory fake', async () => {
  const protocol = new InMemoryExecutorProtocol();
  return {
    protocol,
    async queue(executor, tasks = 1) {
      const executionId = randomUUID();
      const taskRunIds = Array.from({ length: tasks }, (_, i) =>
        protocol.enqueue(executor.type, executor.pool, { executionId, taskId: `t${i}` }),
      );
      return { executionId, taskRunIds };
    },
    async taskRun(taskRunId) {
      const { state, fence, ownerId, reason, exitCode, error, externalRef } = protocol.stored(taskRunId);
      return { state, fence, ownerId, reason, exitCode, error, externalRef };
    },
    async logLines(taskRunId) {
      return protocol.storedLogLines(taskRunId).map(({ seq, stream, line }) => ({ seq, stream, line }));
    },
    async instance(instanceId) {
      const last = protocol.registrations.filter((r) => r.instanceId === instanceId).at(-1);
      return last ? { version: last.version, pools: last.pools } : null;
    },
    async cancel(executionId) {
      protocol.cancelExecution(executionId);
    },
    async close() {},
  };
});
