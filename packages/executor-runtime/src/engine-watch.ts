import type { Logger } from '@sluice/executors';
import { startPeriodic } from '@sluice/observability';
import type { ExecutorType } from '@sluice/protocol';
import type { ExecutorEngine } from './executor-factories';

export interface WatchedEngine {
  type: ExecutorType;
  engine: ExecutorEngine;
}

export interface EngineWatch {
  /** Asks every engine once; the instance starts after it, so its first claim already knows. */
  check(): Promise<void>;
  /** False while the engine of `type` does not answer: the instance claims nothing for it. */
  claimable(type: ExecutorType): boolean;
  /** Not ready while any engine does not answer, naming it. */
  ready(): { ok: boolean; detail?: string };
  /** Checks every interval from now on; stop() waits for a check in flight. */
  start(): void;
  stop(): Promise<void>;
}

/**
 * Follows the engines of the executors that are on (the Docker API today).
 * An executor is on whether or not its engine answers; while it does not,
 * the instance claims nothing for it (no task run is failed for an engine
 * that was down before the claim), /ready says so, and the log says so once
 * — and once more when the engine is back, when `onBack` wakes the instance.
 */
export function watchEngines(options: {
  engines: WatchedEngine[];
  intervalMs: number;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  onBack(): void;
}): EngineWatch {
  const { engines, log } = options;
  // Unknown until the first check: assumed up, so a check that never ran withholds nothing.
  const down = new Set<ExecutorType>();
  let stopPeriodic: (() => Promise<void>) | null = null;

  const check = async (): Promise<void> => {
    let back = false;
    await Promise.all(
      engines.map(async ({ type, engine }) => {
        const answers = await engine.answers();
        if (!answers && !down.has(type)) {
          down.add(type);
          log.warn(`the ${engine.name} does not answer; claiming no ${type} task runs until it does`, {
            executor: type,
          });
        } else if (answers && down.has(type)) {
          down.delete(type);
          back = true;
          log.info(`the ${engine.name} answers again; claiming ${type} task runs`, { executor: type });
        }
      }),
    );
    if (back) options.onBack();
  };

  return {
    check,
    claimable: (type) => !down.has(type),
    ready() {
      const silent = engines.filter(({ type }) => down.has(type));
      if (silent.length === 0) return { ok: true };
      return {
        ok: false,
        detail: silent.map(({ type, engine }) => `${type}: the ${engine.name} does not answer`).join('; '),
      };
    },
    start() {
      if (stopPeriodic || engines.length === 0) return;
      stopPeriodic = startPeriodic({ name: 'engine check', intervalMs: options.intervalMs, log, run: check });
    },
    async stop() {
      await stopPeriodic?.();
      stopPeriodic = null;
    },
  };
}
