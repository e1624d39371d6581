import type { ExecutorBlock, Flow } from '@sluice/flows';

/**
 * What an execution pins at creation: the validated flow and the namespace's
 * executor defaults, so later edits of either do not change a running execution.
 */
export interface ExecutionDefinition {
  flow: Flow;
  namespaceExecutor: ExecutorBlock | null;
}
