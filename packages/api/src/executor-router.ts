import { Router, type ErrorRequestHandler, type Request } from 'express';
import { TaskRunNotFoundError } from '@sluice/store';
import { claimIdempotently, createDirectExecutorProtocol, type Engine } from '@sluice/engine';
import type { Metrics } from '@sluice/observability';
import {
  CancelRequestedRequest,
  ClaimRequest,
  CompletionRequest,
  EXECUTOR_API_PREFIX,
  ExecutorLogBatch,
  FencedTaskRunRef,
  IDEMPOTENCY_KEY_HEADER,
  InstanceRegistration,
  MarkStartedRequest,
  StartSubflowRequest,
  type ClaimedTaskRun,
  type ClaimResponse,
} from '@sluice/protocol';
import { answerLongPoll, waitTimeoutOf } from './executor/long-poll';
import { requireInternalSecret } from './executor/internal-secret';
import { EXECUTOR_BODY_LIMITS as LIMITS, jsonBody } from './body-limits';
import { HttpError } from './http-errors';

export interface ExecutorRouterOptions {
  engine: Engine;
  /** PIPELINE_EXECUTOR_API_TOKEN; empty or unset refuses every call. */
  apiToken: string | undefined;
  /** SLUICE_K8S_MAX_JOBS: active kubernetes task runs per pool over all instances (0 = no limit). */
  k8sMaxJobs?: number;
  log: { warn(message: string, fields?: Record<string, unknown>): void };
  metrics?: Pick<Metrics, 'claimsTotal' | 'claimDuration' | 'heartbeatsTotal'>;
}

/** Idempotency keys are client-made UUIDs; anything this long is not one. */
const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

/**
 * The executor API (/internal/v1/executor/...) for instances in other
 * processes. Each route validates its body with the protocol package's
 * schemas and delegates to the same direct binding the standalone server's
 * embedded instance uses, so both layouts behave alike. Every call carries
 * X-Internal-Secret; without the right one nothing below the check runs.
 */
export function executorRouter(options: ExecutorRouterOptions): Router {
  const { engine, metrics } = options;
  const k8sMaxJobs = options.k8sMaxJobs ?? 0;
  const protocol = createDirectExecutorProtocol(engine, { k8sMaxJobs });
  const router = Router();
  // Each route reads at most its own limit (body-limits.ts), and only after the secret check below.
  const json = jsonBody(LIMITS.small);
  const base = `${EXECUTOR_API_PREFIX}/task-runs/:id`;

  // Before any body parsing: a refused call costs no more than this check.
  router.use(EXECUTOR_API_PREFIX, requireInternalSecret(options.apiToken, options.log));

  router.post(`${EXECUTOR_API_PREFIX}/register`, json, async (req, res) => {
    await protocol.register(InstanceRegistration.parse(req.body));
    res.json({ ok: true });
  });

  router.post(`${EXECUTOR_API_PREFIX}/claim`, json, async (req, res) => {
    const claim = ClaimRequest.parse(req.body);
    const key = idempotencyKeyOf(req);
    const stopTimer = metrics?.claimDuration.startTimer({ executor_type: claim.executorTypes.join(',') });
    let taskRuns: ClaimedTaskRun[];
    if (key === null) {
      taskRuns = await protocol.claim(claim);
      countClaims(taskRuns);
    } else {
      const result = await claimIdempotently(engine, claim, key, { k8sMaxJobs });
      taskRuns = result.taskRuns;
      if (!result.replayed) countClaims(taskRuns);
    }
    stopTimer?.();
    const answer: ClaimResponse = { taskRuns };
    res.json(answer);
  });

  router.get(`${EXECUTOR_API_PREFIX}/wait-for-work`, async (req, res) => {
    await answerLongPoll(res, engine.workSignal.wait(waitTimeoutOf(req)));
  });

  router.post(`${EXECUTOR_API_PREFIX}/cancel-requested`, json, async (req, res) => {
    const { taskRunIds } = CancelRequestedRequest.parse(req.body);
    res.json({ taskRunIds: await protocol.cancelRequested(taskRunIds) });
  });

  router.post(`${base}/started`, json, async (req, res) => {
    await protocol.markStarted(sameTaskRun(req, MarkStartedRequest.parse(req.body)));
    res.json({ ok: true });
  });

  router.post(`${base}/heartbeat`, json, async (req, res) => {
    const answer = await protocol.heartbeat(sameTaskRun(req, FencedTaskRunRef.parse(req.body)));
    metrics?.heartbeatsTotal.inc();
    res.json({ cancel: answer.cancel });
  });

  router.post(`${base}/logs`, jsonBody(LIMITS.logs), async (req, res) => {
    await protocol.reportLogs(sameTaskRun(req, ExecutorLogBatch.parse(req.body)));
    res.json({ ok: true });
  });

  router.post(`${base}/complete`, jsonBody(LIMITS.complete), async (req, res) => {
    const answer = await protocol.complete(sameTaskRun(req, CompletionRequest.parse(req.body)));
    res.json({ applied: answer.applied, state: answer.state });
  });

  router.get(`${base}/running`, async (req, res) => {
    res.json({ running: await protocol.isStillRunning(String(req.params.id)) });
  });

  router.post(`${base}/subflow`, json, async (req, res) => {
    const answer = await protocol.startSubflow(sameTaskRun(req, StartSubflowRequest.parse(req.body)));
    res.json({ executionId: answer.executionId });
  });

  // The claim store's "no such task run" is a 404 here; everything else goes to the app's error handler.
  const notFound: ErrorRequestHandler = (err, _req, _res, next) => {
    next(err instanceof TaskRunNotFoundError ? new HttpError(404, 'not_found', err.message) : err);
  };
  router.use(EXECUTOR_API_PREFIX, notFound);

  function countClaims(taskRuns: ClaimedTaskRun[]): void {
    if (!metrics) return;
    for (const run of taskRuns) metrics.claimsTotal.inc({ executor_type: run.executor.type });
  }

  return router;
}

/** The task run in the path is the one the body writes for; a mismatch is a client bug, not a 404. */
function sameTaskRun<T extends { taskRunId: string }>(req: Request, body: T): T {
  if (body.taskRunId !== req.params.id) {
    throw new HttpError(400, 'invalid_request', 'taskRunId: must equal the task run id in the path');
  }
  return body;
}

function idempotencyKeyOf(req: Request): string | null {
  const key = req.header(IDEMPOTENCY_KEY_HEADER);
  if (key === undefined) return null;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new HttpError(
      400,
      'invalid_request',
      `${IDEMPOTENCY_KEY_HEADER}: expected 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
    );
  }
  return key;
}
