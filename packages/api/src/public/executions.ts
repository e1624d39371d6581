import express, { Router, type Response } from 'express';
import { InputsInvalidError } from '@sluice/flows';
import {
  getExecutionInWorkspace,
  getOutputsOfExecution,
  listTaskRunsOfExecution,
  servedPools,
  type ExecutionRecord,
  type TaskRunRow,
} from '@sluice/store';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { ExecutionStart } from '@sluice/api-schemas';
import { callerNamespace, checkName } from './names';
import { currentUser } from '../user-auth';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkId(kind: string, id: string): string {
  if (!UUID.test(id)) throw new HttpError(404, 'not_found', `${kind} ${id} not found`);
  return id;
}

export { checkId };

/**
 * The execution `id` if it belongs to the caller's workspace. One of another
 * workspace answers exactly as a missing one (docs/decisions.md §12).
 */
export async function callerExecution(
  ctx: PublicApiContext,
  res: Response,
  id: string,
): Promise<ExecutionRecord> {
  const execution = await getExecutionInWorkspace(
    ctx.store,
    currentUser(res).workspace,
    checkId('execution', id),
  );
  if (!execution) throw new HttpError(404, 'not_found', `execution ${id} not found`);
  return execution;
}

function taskRunView(
  run: TaskRunRow,
  waitingForInstance: boolean,
  outputs: Record<string, string> | undefined,
) {
  const executor = run.executor as { type?: string; pool?: string; image?: string };
  return {
    id: run.id,
    taskId: run.taskId,
    attempt: run.attempt,
    state: run.state,
    // A queued task run that no online instance can take says so (docs/decisions.md#vocabulary).
    reason: run.state === 'QUEUED' && waitingForInstance ? 'no_instance_for_pool' : run.reason,
    executor: {
      type: executor.type ?? run.executorType,
      pool: executor.pool ?? run.pool,
      image: executor.image ?? null,
    },
    externalRef: run.externalRef,
    ownerId: run.ownerId,
    exitCode: run.exitCode,
    error: run.error,
    outputs: run.state === 'SUCCEEDED' ? (outputs ?? {}) : undefined,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
  };
}

/** The task runs of an execution as the API shows them (schemas/executions.ts `TaskRun`). */
export async function taskRunViews(ctx: PublicApiContext, executionId: string) {
  const [runs, served, outputs] = await Promise.all([
    listTaskRunsOfExecution(ctx.store, executionId),
    servedPools(ctx.store, ctx.executorSilenceTimeoutMs),
    getOutputsOfExecution(ctx.store, executionId),
  ]);
  const servedSet = new Set(served.map((s) => `${s.executorType}\0${s.pool}`));
  return runs.map((r) => taskRunView(r, !servedSet.has(`${r.executorType}\0${r.pool}`), outputs[r.taskId]));
}

export function executionRoutes(ctx: PublicApiContext): Router {
  const router = Router();

  // The body is optional: a flow without required inputs starts with an empty POST.
  router.post('/namespaces/:ns/flows/:flow/executions', express.json({ limit: '1mb' }), async (req, res) => {
    const ns = callerNamespace(req, res);
    const flowId = checkName('flow', String(req.params.flow));
    const body = ExecutionStart.safeParse(req.body ?? {});
    if (!body.success) {
      throw new HttpError(
        400,
        'invalid_request',
        'the body must be empty or {"inputs": {"<name>": <value>, ...}}',
      );
    }
    try {
      const execution = await ctx.engine.createExecution({
        ...ns,
        flowId,
        trigger: 'api',
        inputs: body.data.inputs ?? {},
      });
      res.status(201).json({ id: execution.id, state: execution.state });
    } catch (err) {
      // The validator's shape, each problem at `inputs.<name>`; nothing was created.
      if (!(err instanceof InputsInvalidError)) throw err;
      res.status(err.status).json({ errors: err.issues });
    }
  });

  router.get('/executions/:id', async (req, res) => {
    const execution = await callerExecution(ctx, res, String(req.params.id));
    const taskRuns = await taskRunViews(ctx, execution.id);
    res.json({
      id: execution.id,
      workspace: execution.workspace,
      namespace: execution.namespace,
      flowId: execution.flowId,
      state: execution.state,
      reason: execution.reason,
      trigger: execution.trigger,
      inputs: execution.inputs ?? {},
      snapshotId: execution.snapshotId,
      cancelRequested: execution.cancelRequested,
      createdAt: execution.createdAt,
      startedAt: execution.startedAt,
      endedAt: execution.endedAt,
      taskRuns,
    });
  });

  router.post('/executions/:id/cancel', async (req, res) => {
    const { id } = await callerExecution(ctx, res, String(req.params.id));
    const execution = await ctx.engine.cancelExecution(id);
    ctx.log.info('execution cancel requested', { executionId: id, user: currentUser(res).user });
    res.status(202).json({ id: execution.id, state: execution.state, cancelRequested: true });
  });

  return router;
}
