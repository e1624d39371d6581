import { Router, type Response } from 'express';
import {
  getArtifact,
  getTaskRun,
  getTaskRunInWorkspace,
  listArtifacts,
  listMetrics,
  readLogs,
  type TaskRunRow,
} from '@sluice/store';
import { isTerminalTaskRunState } from '@sluice/protocol';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { currentUser } from '../user-auth';
import { LogsQuery } from '@sluice/api-schemas/logs';
import { checkId } from './executions';
import { parseQuery } from './paging';

const FOLLOW_POLL_MS = 250;

/**
 * Follow mode: newline-delimited JSON, one line per log line, until the task
 * run has ended and every line it wrote was sent (or the client goes away).
 */
async function followLogs(
  ctx: PublicApiContext,
  taskRunId: string,
  after: number,
  res: Response,
): Promise<void> {
  res.status(200).type('application/x-ndjson');
  res.flushHeaders();
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  let cursor = after;
  while (!closed) {
    const run = await getTaskRun(ctx.store, taskRunId);
    const lines = await readLogs(ctx.store, taskRunId, { afterSeq: cursor, limit: 1000 });
    for (const line of lines) res.write(`${JSON.stringify(line)}\n`);
    if (lines.length > 0) cursor = lines[lines.length - 1]!.seq;
    if (lines.length === 1000) continue;
    // Ended: one more read after the state check catches lines written just before the end.
    if (!run || isTerminalTaskRunState(run.state)) {
      const rest = await readLogs(ctx.store, taskRunId, { afterSeq: cursor, limit: 100_000 });
      for (const line of rest) res.write(`${JSON.stringify(line)}\n`);
      break;
    }
    await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
  }
  res.end();
}

/**
 * The task run `id` if its execution belongs to the caller's workspace; one
 * of another workspace answers exactly as a missing one (docs/decisions.md §12).
 */
async function callerTaskRun(ctx: PublicApiContext, res: Response, id: string): Promise<TaskRunRow> {
  const run = await getTaskRunInWorkspace(ctx.store, currentUser(res).workspace, checkId('task run', id));
  if (!run) throw new HttpError(404, 'not_found', `task run ${id} not found`);
  return run;
}

export function taskRunRoutes(ctx: PublicApiContext): Router {
  const router = Router();

  router.get('/task-runs/:id/logs', async (req, res) => {
    const run = await callerTaskRun(ctx, res, String(req.params.id));
    const id = run.id;
    const { after, limit, follow } = parseQuery(LogsQuery, req);
    if (follow === 'true' || follow === '1') return followLogs(ctx, id, after, res);
    const lines = await readLogs(ctx.store, id, { afterSeq: after, limit });
    res.json({
      taskRunId: id,
      state: run.state,
      lines,
      next: lines.length > 0 ? lines[lines.length - 1]!.seq : after,
    });
  });

  // The metrics the runner reported for the task run (name, value, tags, time), in the order received.
  router.get('/task-runs/:id/metrics', async (req, res) => {
    const { id } = await callerTaskRun(ctx, res, String(req.params.id));
    res.json({ metrics: await listMetrics(ctx.store, id) });
  });

  router.get('/task-runs/:id/artifacts', async (req, res) => {
    const { id } = await callerTaskRun(ctx, res, String(req.params.id));
    res.json({ artifacts: await listArtifacts(ctx.store, id) });
  });

  router.get('/task-runs/:id/artifacts/*name', async (req, res) => {
    const { id } = await callerTaskRun(ctx, res, String(req.params.id));
    const name = (req.params.name as unknown as string[]).join('/');
    const artifact = await getArtifact(ctx.store, id, name);
    if (!artifact) throw new HttpError(404, 'not_found', `artifact ${name} of task run ${id} not found`);
    res
      .attachment(name.split('/').pop() ?? name)
      .type('application/octet-stream')
      .send(artifact.content);
  });

  return router;
}
