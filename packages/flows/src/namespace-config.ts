import { z } from 'zod';
import type { ValidationIssue } from '@sluice/protocol';
import { checkExecutorBlock, NAMESPACE_EXECUTOR_PATH } from './executor-merge';
import { issue, NAMESPACE_FILE, namespacePath } from './issues';
import { ExecutorBlockSchema, ExecutorType } from './schema/executor-block';
import type { NamespaceConfig } from './types';
import { loadYaml } from './yaml';
import { mapZodIssues } from './zod-issues';

export type ParseNamespaceConfigResult =
  { ok: true; config: NamespaceConfig } | { ok: false; errors: ValidationIssue[] };

const NamespaceConfigSchema = z.strictObject({
  defaults: z.strictObject({ executor: ExecutorBlockSchema.optional() }).optional(),
  allowed_executors: z.array(ExecutorType).min(1).optional(),
});

/**
 * Parses a namespace's `namespace.yaml`. Every issue path starts with
 * `namespace.yaml` (`namespace.yaml:defaults.executor.pull`), so the issues
 * can be reported next to a flow's own. An empty file is an empty config.
 */
export function parseNamespaceConfig(yamlText: string): ParseNamespaceConfigResult {
  const loaded = loadYaml(yamlText, NAMESPACE_FILE);
  if (!loaded.ok) return loaded;
  const raw = loaded.value;
  const parsed = NamespaceConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const errors = mapZodIssues(parsed.error.issues, {
      raw,
      schema: NamespaceConfigSchema,
      base: [],
      format: namespacePath,
    });
    return { ok: false, errors };
  }
  const executor = parsed.data.defaults?.executor;
  const errors = executor ? checkExecutorBlock(executor, NAMESPACE_EXECUTOR_PATH) : [];
  const allowed = parsed.data.allowed_executors;
  if (allowed && executor?.type !== undefined && !allowed.includes(executor.type)) {
    errors.push(
      issue(
        'executor_type_not_allowed',
        `${NAMESPACE_EXECUTOR_PATH}.type`,
        `the ${executor.type} executor is not in allowed_executors (${allowed.join(', ')})`,
      ),
    );
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, config: parsed.data };
}
