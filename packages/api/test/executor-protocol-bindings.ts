import { createDirectExecutorProtocol } from '@sluice/engine';
import { getTaskRun, listInstances, listTaskRunsOfExecution, readLogs } from '@sluice/store';
import type { ExecutorProtocol } from '@sluice/protocol';
import type { ExecutorProtocolBinding } from '@sluice/testing';
import { EXECUTOR_TOKEN, executorClient } from './executor-helpers';
import { listen, putFlow, startApiHarness, WORKSPACE } from './harness';

/**
 * The two bindings of the executor contract, each over a server side of its
 * own (engine, API, real PostgreSQL): the in-process binding of a standalone
 * server, and the HTTP client against the executor API served on loopback.
 * All the wiring of the contract suite is here, so a change in how the
 * engine is built is a change in this one function.
 */
export async function executorProtocolBinding(kind: 'direct' | 'http'): Promise<ExecutorProtocolBinding> {
  const h = await startApiHarness({ defaultRetryBackoffMs: 0 }, { executor: { apiToken: EXECUTOR_TOKEN } });
  const api = kind === 'http' ? await listen(h.internalApp) : null;
  const client = api ? executorClient(api.url) : null;
  const protocol: ExecutorProtocol = client ?? createDirectExecutorProtocol(h.engine);
  return {
    protocol,
    async queue(executor, tasks = 1) {
      const flowId = `f-${executor.type}-${executor.pool}-${tasks}`;
      const lines = [
        'retry: { max_attempts: 1 }',
        `executor: { type: ${executor.type}, pool: ${executor.pool} }`,
      ];
      lines.push('tasks:');
      for (let i = 0; i < tasks; i++)
        lines.push(`  - id: t${i}`, '    type: command', '    command: ["true"]');
      const put = await putFlow(h, 'contract', flowId, lines.join('\n'));
      if (put.status !== 200) throw new Error(`put flow: ${put.status} ${put.text}`);
      const execution = await h.engine.createExecution({
        workspace: WORKSPACE,
        namespace: 'contract',
        flowId,
      });
      const runs = await listTaskRunsOfExecution(h.pool, execution.id);
      return { executionId: execution.id, taskRunIds: runs.map((r) => r.id) };
    },
    async taskRun(taskRunId) {
      const row = await getTaskRun(h.pool, taskRunId);
      if (!row) throw new Error(`no task run ${taskRunId}`);
      const { state, fence, ownerId, reason, exitCode, error, externalRef } = row;
      return { state, fence, ownerId, reason, exitCode, error, externalRef };
    },
    async logLines(taskRunId) {
      return (await readLogs(h.pool, taskRunId)).map(({ seq, stream, line }) => ({ seq, stream, line }));
    },
    async instance(instanceId) {
      const found = (await listInstances(h.pool)).find((i) => i.id === instanceId);
      return found ? { version: found.version, pools: found.pools } : null;
    },
    async cancel(executionId) {
      await h.engine.cancelExecution(executionId);
    },
    async close() {
      client?.close();
      await api?.close();
      await h.close();
    },
  };
}
