import {
  addMetrics,
  commitSyncState,
  appendLogs,
  artifactsTotalSize,
  getExecution,
  getTaskRun,
  heartbeatTaskRun,
  markRunning,
  putArtifact,
  readSnapshot,
  setOutputs,
  snapshotSize,
  type TaskRunRow,
} from '@sluice/store';
import { verifyRunToken } from '@sluice/auth';
import type {
  CommitStateRequest,
  HeartbeatResponse,
  LogBatchRequest,
  MetricsRequest,
  OutputsRequest,
  ResultRequest,
  RunnerTaskSpec,
} from '@sluice/protocol';
import { StaleFenceError } from '@sluice/protocol';
import type { Engine } from './engine';
import { PayloadTooLargeError, RunTokenRevokedError } from './errors';
import { connectorTaskPart, syncTaskPart } from './connector-spec';
import { MissingSecretError, resolveTaskEnv } from './secrets';

/** A runner that proved, by its token and the database, that it holds this task run right now. */
export interface RunnerPrincipal {
  taskRun: TaskRunRow;
  fence: number;
}

/**
 * The runner API's logic, independent of HTTP. A run token is valid only
 * while its task run is STARTING/RUNNING at the token's fence: when the task
 * run ends (or is claimed again) the token is revoked by that fact alone.
 */
export class RunnerService {
  constructor(private readonly engine: Engine) {}

  private get deps() {
    return this.engine.deps;
  }

  /**
   * Reads with a revoked token are 401. Writes are answered 409 instead: the
   * token was genuine, but its fence is stale (docs/decisions.md §8), which tells
   * a zombie runner to stop rather than to retry with new credentials.
   */
  async authenticate(token: string, taskRunId: string, access: 'read' | 'write'): Promise<RunnerPrincipal> {
    const claims = await verifyRunToken(this.deps.settings.jwtSecret, token);
    if (claims.taskRunId !== taskRunId) throw new RunTokenRevokedError();
    const taskRun = await getTaskRun(this.deps.store, taskRunId);
    if (!taskRun) throw new RunTokenRevokedError();
    const current =
      taskRun.fence === claims.fence && (taskRun.state === 'STARTING' || taskRun.state === 'RUNNING');
    if (!current) {
      if (access === 'write') throw new StaleFenceError(taskRunId, claims.fence);
      throw new RunTokenRevokedError();
    }
    return { taskRun, fence: claims.fence };
  }

  private checkFence(p: RunnerPrincipal, fence: number): void {
    if (fence !== p.fence) throw new StaleFenceError(p.taskRun.id, fence);
  }

  async spec(p: RunnerPrincipal): Promise<RunnerTaskSpec> {
    const { store, keyring, settings } = this.deps;
    if (!keyring) throw new Error('this process has no SLUICE_MASTER_KEYS: it cannot serve the runner API');
    const run = p.taskRun;
    const execution = await getExecution(store, run.executionId);
    if (!execution) throw new RunTokenRevokedError();
    const task = run.spec as {
      type: string;
      command?: string[];
      interpreter?: string;
      script?: string;
      env?: Record<string, string | { secret: string }>;
    };
    let env: Record<string, string>;
    let connector:
      Awaited<ReturnType<typeof connectorTaskPart>> | Awaited<ReturnType<typeof syncTaskPart>> | null = null;
    // The resolved secret values, so the runner masks them in all it sends back (docs/secrets.md).
    const secretValues: string[] = [];
    try {
      // Keyed by the execution's workspace and namespace: a flow reaches only its own workspace's secrets.
      env = await resolveTaskEnv(store, keyring, execution, task.env);
      for (const [name, value] of Object.entries(task.env ?? {})) {
        if (typeof value === 'string') continue;
        const resolved = env[name] ?? '';
        secretValues.push(resolved);
        this.deps.onSecretResolved?.(resolved);
      }
      if (task.type === 'connector') {
        connector = await connectorTaskPart(store, keyring, execution, run.spec);
      } else if (task.type === 'sync') {
        connector = await syncTaskPart(store, keyring, execution, run.taskId, run.spec);
      }
      if (connector) {
        for (const value of connector.secretValues) {
          secretValues.push(value);
          this.deps.onSecretResolved?.(value);
        }
      }
    } catch (err) {
      if (err instanceof MissingSecretError) {
        // The task cannot run without it: end the attempt with the reason instead of leaving it to the watchdog.
        await this.engine.finishTaskRun({
          taskRunId: run.id,
          fence: p.fence,
          state: 'FAILED',
          reason: 'error',
          error: err.message,
        });
      }
      throw err;
    }
    const taskPart = connector
      ? connector.part
      : task.type === 'script'
        ? {
            type: 'script' as const,
            interpreter: (task.interpreter ?? 'bash') as 'bash',
            script: task.script ?? '',
          }
        : { type: 'command' as const, command: task.command ?? [] };
    const size = execution.snapshotId ? await snapshotSize(store, execution.snapshotId) : 0;
    return {
      taskRunId: run.id,
      executionId: run.executionId,
      taskId: run.taskId,
      attempt: run.attempt,
      fence: p.fence,
      task: taskPart,
      env,
      secretValues,
      timeoutMs: run.timeoutMs,
      heartbeatIntervalMs: settings.runnerHeartbeatIntervalMs,
      cancelGraceMs: settings.cancelGraceMs,
      snapshot: execution.snapshotId ? { id: execution.snapshotId, size } : null,
      limits: settings.runnerLimits,
    };
  }

  async snapshot(p: RunnerPrincipal): Promise<Buffer | null> {
    const execution = await getExecution(this.deps.store, p.taskRun.executionId);
    return execution?.snapshotId ? readSnapshot(this.deps.store, execution.snapshotId) : null;
  }

  async started(p: RunnerPrincipal, fence: number): Promise<void> {
    this.checkFence(p, fence);
    await markRunning(this.deps.store, { taskRunId: p.taskRun.id, fence });
  }

  async logs(p: RunnerPrincipal, req: LogBatchRequest): Promise<number> {
    this.checkFence(p, req.fence);
    const max = this.deps.settings.runnerLimits.logLineMaxBytes;
    const lines = req.lines.map((l) =>
      Buffer.byteLength(l.line) > max ? { ...l, line: `${l.line.slice(0, max)}…[cut]` } : l,
    );
    return appendLogs(this.deps.store, { taskRunId: p.taskRun.id, fence: req.fence, lines });
  }

  async outputs(p: RunnerPrincipal, req: OutputsRequest): Promise<void> {
    this.checkFence(p, req.fence);
    const max = this.deps.settings.runnerLimits.outputValueMaxBytes;
    for (const [key, value] of Object.entries(req.outputs)) {
      if (Buffer.byteLength(value) > max)
        throw new PayloadTooLargeError(`output ${key} is larger than ${max} bytes`);
    }
    await setOutputs(this.deps.store, { taskRunId: p.taskRun.id, fence: req.fence, outputs: req.outputs });
  }

  async metrics(p: RunnerPrincipal, req: MetricsRequest): Promise<void> {
    this.checkFence(p, req.fence);
    await addMetrics(this.deps.store, { taskRunId: p.taskRun.id, fence: req.fence, metrics: req.metrics });
  }

  async artifact(p: RunnerPrincipal, fence: number, name: string, content: Buffer): Promise<void> {
    this.checkFence(p, fence);
    const { artifactMaxBytes, artifactsTotalMaxBytes } = this.deps.settings.runnerLimits;
    if (content.length > artifactMaxBytes)
      throw new PayloadTooLargeError(`artifact ${name} is larger than ${artifactMaxBytes} bytes`);
    const total = await artifactsTotalSize(this.deps.store, p.taskRun.id);
    if (total + content.length > artifactsTotalMaxBytes) {
      throw new PayloadTooLargeError(
        `artifacts of this task run would exceed ${artifactsTotalMaxBytes} bytes`,
      );
    }
    await putArtifact(this.deps.store, { taskRunId: p.taskRun.id, fence, name, content });
  }

  /**
   * Commits a state of a sync task and its ledger row in one fenced
   * statement (docs/connectors.md#sync). What is stored is the source's state
   * object as the runner sent it; the key is the task run's own connection.
   */
  async commitState(p: RunnerPrincipal, req: CommitStateRequest): Promise<boolean> {
    this.checkFence(p, req.fence);
    const state = req.message.state;
    const stateType = state.type ?? 'LEGACY';
    const descriptor = state.stream?.stream_descriptor;
    return commitSyncState(this.deps.store, {
      taskRunId: p.taskRun.id,
      fence: req.fence,
      sequence: req.sequence,
      stateType,
      stream:
        stateType === 'STREAM' && descriptor
          ? { name: descriptor.name, namespace: descriptor.namespace ?? null }
          : null,
      state: JSON.stringify(state),
      streams: req.streams,
    });
  }

  async heartbeat(p: RunnerPrincipal, fence: number): Promise<HeartbeatResponse> {
    this.checkFence(p, fence);
    return heartbeatTaskRun(this.deps.store, { taskRunId: p.taskRun.id, fence });
  }

  async result(p: RunnerPrincipal, req: ResultRequest): Promise<string> {
    this.checkFence(p, req.fence);
    const base = { taskRunId: p.taskRun.id, fence: req.fence, exitCode: req.exitCode, error: req.error };
    const outcome =
      req.stoppedBy === 'cancel' && p.taskRun.cancelRequested
        ? { state: 'CANCELLED' as const, reason: 'cancelled' as const }
        : req.stoppedBy === 'cancel'
          ? // Stopped by a signal nobody asked for through the API: a failure, so the retry policy applies.
            { state: 'FAILED' as const, reason: 'error' as const }
          : req.stoppedBy === 'timeout'
            ? { state: 'FAILED' as const, reason: 'timeout' as const }
            : req.reason === 'invalid_task'
              ? // Refused before it started (a snapshot it must not extract): not worth another attempt.
                { state: 'FAILED' as const, reason: 'invalid_task' as const }
              : req.exitCode === 0
                ? { state: 'SUCCEEDED' as const, reason: null }
                : { state: 'FAILED' as const, reason: 'exit_code' as const };
    const done = await this.engine.finishTaskRun({
      ...base,
      ...outcome,
      error:
        req.error ??
        (outcome.state === 'FAILED' && req.exitCode !== null ? `exit code ${req.exitCode}` : null),
    });
    return done.row.state;
  }
}
