import {
  appendLogs,
  cancelRequestedAmong,
  claimTaskRuns,
  isStillRunning,
  recordExternalRef,
  registerInstance,
  heartbeatTaskRun,
  setOutputs,
  getTaskRun,
  markRunning,
  type ClaimOptions,
  type ClaimedTaskRunRow,
} from '@sluice/store';
import { createRunToken } from '@sluice/auth';
import {
  ClaimRequest,
  CompletionRequest,
  ExecutorLogBatch,
  FencedTaskRunRef,
  InstanceRegistration,
  MarkStartedRequest,
  StartSubflowRequest,
  type ClaimedTaskRun,
  type CompletionResponse,
  type ExecutorProtocol,
  type ResolvedExecutor,
} from '@sluice/protocol';
import type { Engine } from './engine';

/**
 * The executor protocol bound directly to the engine, for the embedded
 * instance of a standalone server. Requests are validated with the same
 * schemas the HTTP executor API uses — every call, as the HTTP client does —
 * so both layouts accept the same input (the executor contract suite checks it).
 */
export interface DirectProtocolOptions {
  /** SLUICE_K8S_MAX_JOBS: active kubernetes task runs per pool over all instances (0 = no limit). */
  k8sMaxJobs?: number;
}

export function createDirectExecutorProtocol(
  engine: Engine,
  options: DirectProtocolOptions = {},
): ExecutorProtocol {
  const { store, settings } = engine.deps;
  const k8sMaxJobs = options.k8sMaxJobs ?? 0;
  return {
    async register(registration) {
      await registerInstance(store, InstanceRegistration.parse(registration));
    },

    async claim(request) {
      const rows = await claimTaskRuns(store, claimOptionsFor(ClaimRequest.parse(request), k8sMaxJobs));
      return Promise.all(rows.map((row) => toClaimedTaskRun(row, settings.jwtSecret)));
    },

    async markStarted(input) {
      const request = MarkStartedRequest.parse(input);
      await recordExternalRef(store, request);
      // Inline work has no runner to report "started": its start is the executor's.
      const run = await getTaskRun(store, request.taskRunId);
      if (run?.executorType === 'inline') await markRunning(store, request);
    },

    heartbeat: async (ref) => heartbeatTaskRun(store, FencedTaskRunRef.parse(ref)),

    async reportLogs(batch) {
      await appendLogs(store, ExecutorLogBatch.parse(batch));
    },

    async complete(request): Promise<CompletionResponse> {
      const req = CompletionRequest.parse(request);
      if (Object.keys(req.outputs).length > 0) {
        // Inline tasks report outputs with their completion. Written first, so
        // dependents queued by the completion can render them; fenced like any write.
        await setOutputs(store, { taskRunId: req.taskRunId, fence: req.fence, outputs: req.outputs });
      }
      const done = await engine.finishTaskRun(req);
      return { applied: done.applied, state: done.row.state };
    },

    isStillRunning: (taskRunId) => isStillRunning(store, taskRunId),
    cancelRequested: (ids) => cancelRequestedAmong(store, ids),
    startSubflow: async (request) => engine.startSubflow(StartSubflowRequest.parse(request)),
    waitForWork: (timeoutMs) => engine.workSignal.wait(timeoutMs),
  };
}

/** What a claim asks of the claim store. Shared with idempotent claims (executor-claims.ts). */
export function claimOptionsFor(req: ClaimRequest, k8sMaxJobs: number): ClaimOptions {
  return {
    ownerId: req.instanceId,
    executorTypes: req.executorTypes,
    pools: req.pools,
    limit: req.limit,
    // The per-pool kubernetes limit holds across all instances: the claim store enforces it inside the claim.
    perPoolLimits:
      k8sMaxJobs > 0 && req.executorTypes.includes('kubernetes')
        ? req.pools.map((p) => ({ executorType: 'kubernetes' as const, pool: p, maxActive: k8sMaxJobs }))
        : undefined,
  };
}

/** A claimed row as the executor receives it, with a run token minted for its current fence. */
export async function toClaimedTaskRun(row: ClaimedTaskRunRow, jwtSecret: string): Promise<ClaimedTaskRun> {
  return {
    taskRunId: row.id,
    executionId: row.executionId,
    taskId: row.taskId,
    attempt: row.attempt,
    fence: row.fence,
    executor: row.executor as unknown as ResolvedExecutor,
    timeoutMs: row.timeoutMs,
    task: stripEnv(row.spec),
    runToken: await createRunToken(jwtSecret, { taskRunId: row.id, fence: row.fence }, row.timeoutMs),
  };
}

/** Executors never see the task's environment: secret references are the runner's business. */
function stripEnv(spec: Record<string, unknown>): Record<string, unknown> {
  const { env: _env, ...rest } = spec;
  return rest;
}
