import type { ExecutorProtocol, ExecutorType, InstanceRegistration } from '@sluice/protocol';
import type { Executor, Logger } from '@sluice/executors';

/** Slots that a set of executor types share (docs/decisions.md §3). */
export interface SlotGroupConfig {
  name: string;
  executorTypes: ExecutorType[];
  /** Task runs of these types running at once on this instance; null = no per-instance limit (kubernetes). */
  slots: number | null;
  /** Task runs one claim asks for when `slots` is null. Default 1 ("one claim every interval"). */
  claimBatch?: number;
  /** Overrides the instance's poll interval for this group (DOCKER_/K8S_EXECUTOR_JOB_WORKER_INTERVAL). */
  pollIntervalMs?: number;
}

/** Optional hooks for the instance's gauges and counters. */
export interface InstanceMetrics {
  /** Local task runs of one executor type, after every change. */
  runningChanged?(executorType: ExecutorType, count: number): void;
  /** Task runs one claim returned for a slot group. */
  claimed?(slotGroup: string, count: number): void;
}

export interface InstanceOptions {
  instanceId: string;
  type: InstanceRegistration['type'];
  version: string;
  protocol: ExecutorProtocol;
  executors: Executor[];
  pools: string[];
  slotGroups: SlotGroupConfig[];
  /** SLUICE_QUEUE_POLL_INTERVAL: claims and cancel checks. */
  pollIntervalMs: number;
  /** Re-registration, which also tells the server the instance is alive. Default 15 s. */
  registrationIntervalMs?: number;
  /** Runner API base URL as runners see it (SLUICE_API_URL). */
  runnerApiUrl: string;
  log: Logger;
  metrics?: InstanceMetrics;
  resourceDefaults?: Record<string, string>;
  /**
   * False while an executor type may not be claimed for (its engine does not
   * answer): its slot group leaves it out of claims. Default: always true.
   */
  claimable?(executorType: ExecutorType): boolean;
  /** Upper bound for stop() to wait for local work to end. Default 20 s. */
  shutdownTimeoutMs?: number;
}

/** Inline tasks: 64 per instance, not configurable (docs/decisions.md §3). */
export const INLINE_SLOTS = 64;

/**
 * Keeps only the executor types this instance really has, drops groups left
 * empty, and insists that every executor has exactly one group — otherwise it
 * could never claim work, or could claim past its slots.
 */
export function resolveSlotGroups(groups: SlotGroupConfig[], executors: Executor[]): SlotGroupConfig[] {
  const available = new Set(executors.map((e) => e.type));
  const seen = new Map<ExecutorType, string>();
  const resolved: SlotGroupConfig[] = [];
  for (const group of groups) {
    if (group.slots !== null && (!Number.isInteger(group.slots) || group.slots < 0)) {
      throw new Error(
        `slot group ${group.name}: slots must be a non-negative integer or null, got ${group.slots}`,
      );
    }
    const executorTypes = group.executorTypes.filter((t) => available.has(t));
    for (const type of executorTypes) {
      const other = seen.get(type);
      if (other !== undefined)
        throw new Error(`executor type ${type} is in slot groups ${other} and ${group.name}`);
      seen.set(type, group.name);
    }
    if (executorTypes.length > 0) resolved.push({ ...group, executorTypes });
  }
  for (const type of available) {
    if (!seen.has(type)) throw new Error(`executor ${type} has no slot group in InstanceOptions.slotGroups`);
  }
  if (available.size !== executors.length)
    throw new Error('InstanceOptions.executors lists an executor type twice');
  return resolved;
}

export function buildRegistration(options: InstanceOptions, groups: SlotGroupConfig[]): InstanceRegistration {
  const capacity: Record<string, number | null> = {};
  for (const group of groups) for (const type of group.executorTypes) capacity[type] = group.slots;
  return {
    instanceId: options.instanceId,
    type: options.type,
    version: options.version,
    capacity,
    pools: options.pools,
    executors: options.executors.map((e) => e.type),
    resourceDefaults: options.resourceDefaults ?? {},
  };
}
