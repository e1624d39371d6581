import { Router } from 'express';
import { listExecutions, type ExecutionRecord } from '@sluice/store';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { ExecutionListQuery } from '@sluice/api-schemas';
import { currentUser } from '../user-auth';
import { callerExecution, taskRunViews } from './executions';
import { checkName } from './names';
import { executionAfter, pageOf, parseQuery } from './paging';

function executionSummary(e: ExecutionRecord) {
  return {
    id: e.id,
    workspace: e.workspace,
    namespace: e.namespace,
    flowId: e.flowId,
    state: e.state,
    reason: e.reason,
    trigger: e.trigger,
    inputs: e.inputs ?? {},
    cancelRequested: e.cancelRequested,
    createdAt: e.createdAt,
    startedAt: e.startedAt,
    endedAt: e.endedAt,
  };
}

export function executionListRoutes(ctx: PublicApiContext): Router {
  const router = Router();

  // The caller's workspace's executions, newest first, a page at a time (docs/api.md#pagination).
  router.get('/executions', async (req, res) => {
    const q = parseQuery(ExecutionListQuery, req);
    if (q.flow !== undefined && q.namespace === undefined)
      throw new HttpError(400, 'invalid_request', 'flow: a flow filter needs namespace too');
    const rows = await listExecutions(
      ctx.store,
      {
        workspace: currentUser(res).workspace,
        namespace: q.namespace === undefined ? undefined : checkName('namespace', q.namespace),
        flowId: q.flow === undefined ? undefined : checkName('flow', q.flow),
        state: q.state,
        createdAfter: q.createdAfter === undefined ? undefined : new Date(q.createdAfter),
        createdBefore: q.createdBefore === undefined ? undefined : new Date(q.createdBefore),
      },
      { limit: q.limit + 1, after: executionAfter(q.cursor) },
    );
    const page = pageOf(rows, q.limit, (e) => [e.createdAt.toISOString(), e.id]);
    res.json({ executions: page.items.map(executionSummary), nextCursor: page.nextCursor });
  });

  router.get('/executions/:id/task-runs', async (req, res) => {
    const execution = await callerExecution(ctx, res, String(req.params.id));
    res.json({ taskRuns: await taskRunViews(ctx, execution.id) });
  });

  return router;
}
