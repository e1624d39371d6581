import type {
  ClaimRequest,
  ClaimedTaskRun,
  CompletionRequest,
  CompletionResponse,
  ExecutorLogBatch,
  ExecutorProtocol,
  FencedTaskRunRef,
  InstanceRegistration,
  MarkStartedRequest,
  StartSubflowRequest,
} from '@sluice/protocol';
import type { LogFields, Logger } from '../src';

/** Polls `check` until it returns a value other than undefined/false; fails with `what` after `ms`. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: LogFields | undefined;
}

export function recordingLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at =
    (level: LogRecord['level']) =>
    (message: string, fields?: LogFields): void => {
      records.push({ level, message, fields });
    };
  return {
    records,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  };
}

let counter = 0;

/** A claimed task run as the server would hand it out; fields overridable per test. */
export function claimedRun(overrides: Partial<ClaimedTaskRun> = {}): ClaimedTaskRun {
  counter += 1;
  return {
    taskRunId: `tr-${counter}`,
    executionId: 'ex-1',
    taskId: 'task',
    attempt: 1,
    fence: 1,
    executor: { type: 'process', pool: 'default' },
    timeoutMs: 60_000,
    task: { type: 'command', command: ['true'] },
    runToken: `run-token-${counter}`,
    ...overrides,
  };
}

/** Records what an executor reports; every call succeeds unless a test overrides it. */
export class RecordingProtocol implements ExecutorProtocol {
  logs: ExecutorLogBatch[] = [];
  completions: CompletionRequest[] = [];
  heartbeats: FencedTaskRunRef[] = [];
  cancelOnHeartbeat = false;

  async register(_registration: InstanceRegistration): Promise<void> {}
  async claim(_request: ClaimRequest): Promise<ClaimedTaskRun[]> {
    return [];
  }
  async markStarted(_request: MarkStartedRequest): Promise<void> {}
  async heartbeat(ref: FencedTaskRunRef): Promise<{ cancel: boolean }> {
    this.heartbeats.push(ref);
    return { cancel: this.cancelOnHeartbeat };
  }
  async reportLogs(batch: ExecutorLogBatch): Promise<void> {
    this.logs.push(batch);
  }
  async complete(request: CompletionRequest): Promise<CompletionResponse> {
    this.completions.push(request);
    return { applied: true, state: request.state };
  }
  async isStillRunning(_taskRunId: string): Promise<boolean> {
    return false;
  }
  async cancelRequested(_taskRunIds: string[]): Promise<string[]> {
    return [];
  }
  subflows: StartSubflowRequest[] = [];
  async startSubflow(request: StartSubflowRequest): Promise<{ executionId: string }> {
    this.subflows.push(request);
    return { executionId: `child-of-${request.taskRunId}` };
  }
  async waitForWork(_timeoutMs: number): Promise<boolean> {
    return false;
  }
  logLines(taskRunId: string): string[] {
    return this.logs.filter((b) => b.taskRunId === taskRunId).flatMap((b) => b.lines.map((l) => l.line));
  }
}
