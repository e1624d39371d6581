import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { constants } from 'node:os';
import { ResultInput, RunnerClient, RunnerTaskSpec } from '@sluice/protocol';
import { openArtifact, selectArtifacts } from './artifacts';
import { buildChildEnv } from './child-env';
import { ConnectorOutput, ConnectorResult, prepareConnector } from './connector-task';
import { Heartbeats, startHeartbeats } from './heartbeats';
import { LineSplitter } from './line-splitter';
import { LogShipper } from './log-shipper';
import { isOwnershipLost } from './ownership';
import { createRunDirs, RunDirs, removeRunDirs } from './run-dirs';
import { extractSnapshot, SnapshotRejectedError } from './snapshot';
import { SecretMasker } from './secret-masker';
import { readMetrics, readOutputs } from './task-files';
import { describeSpawnError, resolveTaskCommand } from './task-command';
import { OutputStream, TaskExit, TaskProcess } from './task-process';
import type { SyncOrchestrator, SyncOutcome } from './sync/orchestrator';
import { createSyncRun } from './sync/run-sync-task';

export interface TaskRunOptions {
  /** Parent of the run directory; the OS temp dir by default. */
  workRoot?: string;
  /** The runner's environment, source of the variables a task inherits. */
  env: Record<string, string | undefined>;
  /** Runner diagnostics. Never given env values or task output. */
  log: (message: string) => void;
  /** Treat SIGTERM/SIGINT of this process as a cancel. */
  handleSignals: boolean;
  /** Settles when the instance that started the runner died (see RunTaskOptions.parentGone). */
  parentGone?: Promise<void>;
  /** How long the last log lines may take to deliver once the task has ended. */
  finalFlushTimeoutMs: number;
  /** Log lines queued before the task's output is paused. */
  maxQueuedLogLines?: number;
}

/** `invalid_task`: refused before it started for a reason a retry cannot change (docs/task-run-lifecycle.md §7). */
type Refusal = 'invalid_task';
type SyncResult = Extract<SyncOutcome, { started: true }>;
type Outcome =
  | { started: true; exit: TaskExit; connector?: ConnectorResult }
  | { started: true; sync: SyncResult }
  | { started: false; error: string; reason?: Refusal };

const METRICS_PER_BATCH = 1000;
/** setTimeout's ceiling (about 24.8 days); longer delays would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One task run inside `sluice exec`: prepare the work dir, run the task with
 * its output streamed as log lines, heartbeat and honour cancels and the
 * timeout, deliver outputs, metrics and artifacts, then post the result.
 */
export class TaskRun {
  private readonly shipper: LogShipper;
  /** Nothing the task could have printed leaves the runner without passing it (docs/secrets.md). */
  private readonly masker: SecretMasker;
  private readonly options: TaskRunOptions;
  private heartbeats: Heartbeats | null = null;
  private proc: TaskProcess | null = null;
  private sync: SyncOrchestrator | null = null;
  private stopReason: 'cancel' | 'timeout' | null = null;
  private taskEnded = false;
  private lostOwnership: Error | null = null;
  private timeoutTimer: NodeJS.Timeout | null = null;
  private startedReport: Promise<void> = Promise.resolve();

  constructor(
    private readonly spec: RunnerTaskSpec,
    private readonly client: RunnerClient,
    options: TaskRunOptions,
  ) {
    const masker = new SecretMasker(spec.secretValues ?? []);
    this.masker = masker;
    // Diagnostics carry error messages, which may quote what the task wrote.
    this.options = { ...options, log: (message) => options.log(masker.mask(message)) };
    this.shipper = new LogShipper({
      send: (lines) => client.sendLogs(lines),
      log: this.options.log,
      mask: (line) => masker.mask(line),
      onPressure: (paused) => {
        if (paused) this.proc?.pauseOutput();
        else this.proc?.resumeOutput();
        this.sync?.setLogPressure(paused);
      },
      onOwnershipLost: (error) => this.onOwnershipLost(error),
      maxQueuedLines: options.maxQueuedLogLines,
    });
  }

  /** Returns the runner's exit code: the task's, 128+signal when killed, 1 when it did not run. */
  async run(): Promise<number> {
    const onSignal = (signal: NodeJS.Signals): void =>
      this.requestStop('cancel', `runner received ${signal}; sending SIGTERM to the task's process group`);
    if (this.options.handleSignals) {
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    }
    this.heartbeats = startHeartbeats({
      client: this.client,
      intervalMs: this.spec.heartbeatIntervalMs,
      onCancel: () =>
        this.requestStop('cancel', "cancel requested; sending SIGTERM to the task's process group"),
      onOwnershipLost: (error) => this.onOwnershipLost(error),
      log: this.options.log,
    });
    // void: parentGone only resolves (stdin ended); onOwnershipLost handles the rest.
    void this.options.parentGone?.then(() =>
      this.onOwnershipLost(new Error('the instance that started this runner is gone')),
    );
    let dirs: RunDirs | null = null;
    try {
      let outcome: Outcome;
      try {
        dirs = await createRunDirs(this.options.workRoot);
        outcome = await this.execute(dirs);
      } catch (error) {
        // Not the task's fault (a full disk, an unwritable work root): still report it as the result.
        outcome = this.notStarted(`runner: ${(error as Error).message}`);
      }
      if (outcome.started && dirs && !this.lostOwnership) {
        const resultOutputs =
          'sync' in outcome ? outcome.sync.outputs : outcome.connector?.ok ? outcome.connector.outputs : {};
        await this.deliverTaskFiles(dirs, resultOutputs);
      }
      return await this.finish(outcome);
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      this.heartbeats.stop();
      if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
      this.shipper.abandon();
      if (dirs) {
        await removeRunDirs(dirs).catch((e: Error) => this.options.log(`work dir not removed: ${e.message}`));
      }
    }
  }

  private async execute(dirs: RunDirs): Promise<Outcome> {
    const spec = this.spec;
    try {
      if (spec.snapshot) {
        const bundle = await this.client.downloadSnapshot();
        if (!bundle) throw new Error(`snapshot ${spec.snapshot.id} is not available`);
        await extractSnapshot(bundle, dirs.work);
      }
    } catch (error) {
      if (!isOwnershipLost(error)) {
        // The bundle is pinned to the execution: every attempt would be refused the same way.
        const refusal = error instanceof SnapshotRejectedError ? 'invalid_task' : undefined;
        return this.notStarted(`snapshot: ${(error as Error).message}`, refusal);
      }
      this.onOwnershipLost(error as Error);
      return { started: false, error: '' };
    }
    if (this.stopReason) return this.notStarted('cancelled before the task started');
    if (this.lostOwnership) return this.notStarted('');

    const env = buildChildEnv(this.options.env, spec, dirs);
    const task = spec.task;
    let argv: [string, ...string[]];
    let connector: ConnectorOutput | null = null;
    if (task.type === 'sync') return this.executeSync(task, dirs, env);
    if (task.type === 'connector') {
      const prepared = await prepareConnector(task, dirs.root, this.options.env, {
        log: (stream, line) => this.shipper.write(stream, line),
        mask: (text) => this.masker.mask(text),
        logLineMaxBytes: spec.limits.logLineMaxBytes,
        outputValueMaxBytes: spec.limits.outputValueMaxBytes,
      });
      if (!prepared) {
        const why = `the connector has no command, and its image sets no AIRBYTE_ENTRYPOINT here (image ${task.image ?? ''})`;
        return this.notStarted(why, 'invalid_task');
      }
      argv = prepared.argv;
      connector = prepared.output;
    } else {
      const command = resolveTaskCommand(task, dirs.work, env.PATH ?? '');
      if (command.scriptFile) {
        await writeFile(command.scriptFile.path, command.scriptFile.body, { mode: 0o700 });
      }
      argv = command.argv;
    }

    const maxLine = spec.limits.logLineMaxBytes;
    const maskCut = (kept: string): string => this.masker.maskCut(kept);
    const splitters: Record<OutputStream, LineSplitter> = {
      stdout: new LineSplitter(maxLine, (line) => this.shipper.write('stdout', line), maskCut),
      stderr: new LineSplitter(
        maxLine,
        (line) => {
          this.shipper.write('stderr', line);
          connector?.stderrLine(line);
        },
        maskCut,
      ),
    };
    // A connector's stdout is protocol messages, read by its parser rather than cut into log lines.
    const onStdout = connector
      ? { push: (chunk: Buffer) => connector.stdout(chunk), end: () => connector.stdoutEnd() }
      : splitters.stdout;
    const output = { stdout: onStdout, stderr: splitters.stderr };
    try {
      this.proc = await TaskProcess.spawn({
        argv,
        cwd: dirs.work,
        env,
        onOutput: (stream, chunk) => output[stream].push(chunk),
        onOutputEnd: (stream) => output[stream].end(),
        onLeftovers: () => this.shipper.write('system', 'processes the task left running were killed'),
      });
    } catch (error) {
      return this.notStarted(describeSpawnError(spec.task, argv[0], error as NodeJS.ErrnoException));
    }

    const proc = this.proc;
    this.shipper.write('system', `task started (pid ${proc.pid})`);
    this.reportStarted(proc.pid);

    const exit = await proc.exited;
    this.taskEnded = true;
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    output.stdout.end();
    splitters.stderr.end();
    if (!connector) return { started: true, exit };
    const result = connector.finish(exit);
    if (result.ok && result.artifact) {
      await writeFile(join(dirs.artifactsDir, result.artifact.name), result.artifact.body);
    }
    return { started: true, exit, connector: result };
  }

  /** Reports the start, arms the timeout, and applies a stop that arrived while the task was starting. */
  private reportStarted(pid?: number): void {
    const spec = this.spec;
    // Log batches follow the started report, so the server sees RUNNING before any line.
    this.startedReport = this.client.started(pid).then(
      () => this.shipper.start(),
      (error: Error) => {
        if (isOwnershipLost(error)) this.onOwnershipLost(error);
        else this.options.log(`started report not delivered: ${error.message}`);
        this.shipper.start();
      },
    );
    this.timeoutTimer = setTimeout(
      () =>
        this.requestStop(
          'timeout',
          `timeout of ${spec.timeoutMs} ms reached; sending SIGTERM to the task's process group`,
        ),
      Math.min(spec.timeoutMs, MAX_TIMER_MS),
    );
    if (this.stopReason || this.lostOwnership) this.stopProcess();
  }

  /** A sync task: the runner is the orchestrator between its source and destination (src/sync/). */
  private async executeSync(
    task: Extract<RunnerTaskSpec['task'], { type: 'sync' }>,
    dirs: RunDirs,
    env: Record<string, string>,
  ): Promise<Outcome> {
    const sync = createSyncRun({
      spec: this.spec,
      task,
      dirs,
      env,
      runnerEnv: this.options.env,
      log: (stream, line) => this.shipper.write(stream, line),
      mask: (text) => this.masker.mask(text),
      maskCut: (kept) => this.masker.maskCut(kept),
      commit: async (request) => {
        try {
          return await this.client.commitState(request);
        } catch (error) {
          if (isOwnershipLost(error)) this.onOwnershipLost(error as Error);
          throw error;
        }
      },
      sendMetrics: (metrics) => void this.deliver('metrics', () => this.client.sendMetrics(metrics)),
      onStarted: () => this.reportStarted(),
    });
    if ('invalid' in sync) return this.notStarted(sync.invalid, 'invalid_task');
    this.sync = sync;
    const outcome = await sync.run();
    this.taskEnded = true;
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    if (!outcome.started)
      return this.notStarted(outcome.error, outcome.invalidTask ? 'invalid_task' : undefined);
    return { started: true, sync: outcome };
  }

  private notStarted(message: string, refusal?: Refusal): Outcome {
    this.taskEnded = true;
    if (message) this.shipper.write('system', message);
    return refusal ? { started: false, error: message, reason: refusal } : { started: false, error: message };
  }

  /** Outputs, metrics and artifacts the task left; each failure is reported in the task's log. */
  private async deliverTaskFiles(dirs: RunDirs, resultOutputs: Record<string, string>): Promise<void> {
    const { limits } = this.spec;
    const outputs = await readOutputs(dirs.outputsFile, limits.outputValueMaxBytes);
    outputs.problems.forEach((problem) => this.shipper.write('system', problem));
    // A connector's result wins over what it wrote to $SLUICE_OUTPUTS.
    Object.assign(outputs.value, resultOutputs);
    if (Object.keys(outputs.value).length > 0) {
      const masked = this.masker.maskRecord(outputs.value);
      await this.deliver('outputs', () => this.client.sendOutputs(masked));
    }

    const metrics = await readMetrics(dirs.metricsFile);
    metrics.problems.forEach((problem) => this.shipper.write('system', problem));
    const maskedMetrics = this.masker.active
      ? metrics.value.map((m) => ({
          ...m,
          name: this.masker.mask(m.name),
          tags: this.masker.maskRecord(m.tags),
        }))
      : metrics.value;
    for (let i = 0; i < maskedMetrics.length && !this.lostOwnership; i += METRICS_PER_BATCH) {
      const batch = maskedMetrics.slice(i, i + METRICS_PER_BATCH);
      await this.deliver('metrics', () => this.client.sendMetrics(batch));
    }

    const artifacts = await selectArtifacts(dirs.artifactsDir, limits);
    artifacts.skipped.forEach((message) => this.shipper.write('system', message));
    for (const file of artifacts.accepted) {
      if (this.lostOwnership) return;
      await this.deliver(`artifact ${file.name}`, () =>
        this.client.uploadArtifact(file.name, openArtifact(file), file.size),
      );
    }
  }

  private async deliver(what: string, send: () => Promise<unknown>): Promise<void> {
    if (this.lostOwnership) return;
    try {
      await send();
    } catch (error) {
      if (isOwnershipLost(error)) this.onOwnershipLost(error as Error);
      else this.shipper.write('system', `${what} not delivered: ${(error as Error).message}`);
    }
  }

  private async finish(outcome: Outcome): Promise<number> {
    const result = this.describe(outcome);
    if (result.request.error) result.request.error = this.masker.mask(result.request.error);
    await this.startedReport;
    const undelivered = await this.shipper.close(this.options.finalFlushTimeoutMs);
    if (undelivered > 0) this.options.log(`${undelivered} log lines could not be delivered`);
    if (this.lostOwnership) return this.abandoned();
    try {
      await this.client.result(result.request);
    } catch (error) {
      if (isOwnershipLost(error)) return this.abandoned(error as Error);
      this.options.log(`result not delivered: ${(error as Error).message}`);
      return 1;
    }
    return result.exitCode;
  }

  private describe(outcome: Outcome): { request: ResultInput; exitCode: number } {
    const stoppedBy = this.stopReason;
    const stopped =
      stoppedBy === 'cancel'
        ? 'cancelled'
        : stoppedBy === 'timeout'
          ? `timed out after ${this.spec.timeoutMs} ms`
          : null;
    if (!outcome.started) {
      const request: ResultInput = { exitCode: null, stoppedBy, error: outcome.error || stopped };
      if (outcome.reason && !stoppedBy) request.reason = outcome.reason;
      return { request, exitCode: 1 };
    }
    if ('sync' in outcome) {
      const { sync } = outcome;
      if (sync.ok && !stoppedBy) return { request: { exitCode: 0, stoppedBy, error: null }, exitCode: 0 };
      const error = stoppedBy ? [stopped, sync.error].filter(Boolean).join('; ') : sync.error;
      return { request: { exitCode: sync.exitCode, stoppedBy, error }, exitCode: sync.exitCode ?? 1 };
    }
    const { code, signal } = outcome.exit;
    if (outcome.connector && !outcome.connector.ok && !stoppedBy) {
      // A connector that exited 0 without its result still failed: no exit code says success.
      const exitCode = code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
      const request: ResultInput = {
        exitCode: exitCode === 0 ? null : exitCode,
        stoppedBy,
        error: outcome.connector.error,
      };
      return { request, exitCode: exitCode === 0 ? 1 : exitCode };
    }
    let exitCode: number;
    let error: string | null;
    if (code !== null) {
      exitCode = code;
      error = code === 0 ? null : `exit code ${code}`;
    } else {
      exitCode = 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
      error = `killed by ${signal ?? 'an unknown signal'}`;
    }
    const message = [stopped, error].filter(Boolean).join('; ') || null;
    return { request: { exitCode, stoppedBy, error: message }, exitCode };
  }

  private requestStop(reason: 'cancel' | 'timeout', message: string): void {
    if (this.stopReason || this.taskEnded || this.lostOwnership) return;
    this.stopReason = reason;
    this.shipper.write('system', message);
    this.stopProcess();
  }

  private stopProcess(): void {
    const grace = this.spec.cancelGraceMs;
    this.sync?.stop(
      this.lostOwnership
        ? 'the task run is no longer ours'
        : this.stopReason === 'timeout'
          ? `timed out after ${this.spec.timeoutMs} ms`
          : 'cancelled',
    );
    this.proc?.stop(Math.min(grace, MAX_TIMER_MS), () =>
      this.shipper.write(
        'system',
        `still running ${grace} ms after SIGTERM; sent SIGKILL to the task's process group`,
      ),
    );
  }

  /** Someone else ended or took over this task run: stop the task at once; nothing we send counts. */
  private onOwnershipLost(error: Error): void {
    if (this.lostOwnership) return;
    this.lostOwnership = error;
    this.options.log(
      `task run ${this.spec.taskRunId} is no longer ours (${error.message}); stopping the task`,
    );
    this.shipper.abandon();
    this.heartbeats?.stop();
    if (!this.taskEnded) this.stopProcess();
  }

  private abandoned(error: Error | null = this.lostOwnership): number {
    this.options.log(`exiting without a result: ${error?.message ?? 'task run no longer ours'}`);
    return 1;
  }
}
