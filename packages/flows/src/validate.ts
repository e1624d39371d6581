import type { ValidationIssue } from '@sluice/protocol';
import { mergedExecutorIssues } from './executor-merge';
import { analyzeFlow, type FlowContext, type ParseFlowResult } from './parse-flow';
import type { NamespaceConfig } from './types';

/**
 * Everything the API checks before storing a flow: parseFlow plus the
 * merged-executor checks against the namespace's config (undefined when the
 * namespace has no namespace.yaml). The merge checks also run on the tasks
 * that parsed when others did not, so one round trip shows every problem.
 */
export function validateFlowFile(
  yamlText: string,
  ctx: FlowContext,
  namespaceConfig?: NamespaceConfig,
): ParseFlowResult {
  const analysis = analyzeFlow(yamlText, ctx);
  const errors: ValidationIssue[] = [...analysis.errors];
  if (analysis.executor !== 'invalid') {
    errors.push(
      ...mergedExecutorIssues(
        analysis.tasks,
        analysis.executor,
        namespaceConfig?.defaults?.executor,
        namespaceConfig?.allowed_executors,
      ),
    );
  }
  if (errors.length > 0 || !analysis.flow) return { ok: false, errors };
  return { ok: true, flow: analysis.flow };
}
