import type { ValidationIssue } from '@sluice/protocol';
import { mergedExecutorIssues } from './executor-merge';
import type { Flow, NamespaceConfig } from './types';

/**
 * An execution refused because a task would run on an executor type its
 * namespace.yaml `allowed_executors` leaves out (a flow stored before the
 * rule was written). `status` is what the API answers.
 */
export class ExecutorTypeNotAllowedError extends Error {
  readonly status = 422;
  readonly code = 'executor_type_not_allowed';

  constructor(
    readonly namespace: string,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(`namespace ${namespace}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.name = 'ExecutorTypeNotAllowedError';
  }
}

/** The flow's tasks whose merged executor type the namespace does not allow, as validator issues. */
export function disallowedExecutorIssues(
  flow: Flow,
  config: NamespaceConfig | null | undefined,
): ValidationIssue[] {
  const allowed = config?.allowed_executors;
  if (!allowed) return [];
  return mergedExecutorIssues(flow.tasks, flow.executor, config.defaults?.executor, allowed).filter(
    (i) => i.code === 'executor_type_not_allowed',
  );
}

/** Throws ExecutorTypeNotAllowedError when a task of `flow` may not run in `namespace`; inline tasks always may. */
export function assertExecutorTypesAllowed(
  flow: Flow,
  config: NamespaceConfig | null | undefined,
  namespace: string,
): void {
  const issues = disallowedExecutorIssues(flow, config);
  if (issues.length > 0) throw new ExecutorTypeNotAllowedError(namespace, issues);
}
