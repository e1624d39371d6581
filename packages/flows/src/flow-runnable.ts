import type { ValidationIssue } from '@sluice/protocol';
import { validateFlowAgainstNamespace } from './executor-merge';
import { ExecutionRefusedError } from './issues';
import type { Flow, NamespaceConfig } from './types';

/**
 * An execution refused because the flow, merged with the namespace.yaml of
 * now, is no longer valid (namespace.yaml changed after the flow was stored:
 * a default type that needs an image, a field the merged type does not
 * accept). The API answers 422 with the validator's issues, as a PUT would.
 */
export class FlowNotRunnableError extends ExecutionRefusedError {
  constructor(namespace: string, flowId: string, issues: readonly ValidationIssue[]) {
    super(namespace, flowId, issues, `flow ${namespace}/${flowId} is not valid with its namespace.yaml`);
    this.name = 'FlowNotRunnableError';
  }
}

/** Throws FlowNotRunnableError when `flow` does not validate against the namespace's current config. */
export function assertFlowRunnable(
  flow: Flow,
  config: NamespaceConfig | null | undefined,
  namespace: string,
  flowId: string,
): void {
  const issues = validateFlowAgainstNamespace(flow, config ?? undefined);
  if (issues.length > 0) throw new FlowNotRunnableError(namespace, flowId, issues);
}
