import { z } from 'zod';
import type { ValidationIssue } from '@sluice/protocol';
import { checkTaskGraph } from './graph-checks';
import { didYouMean, formatPath, issue, listWords, type PathSegment } from './issues';
import { ExecutorBlockSchema } from './schema/executor-block';
import { duration, Retry, Schedule } from './schema/fields';
import { TASK_SCHEMAS } from './schema/tasks';
import { checkRawExecutorBlock } from './executor-merge';
import { checkInputDeclarations } from './inputs';
import { INPUT_NAME_PATTERN, InputDeclarationSchema, InputsSchema } from './schema/inputs';
import { findTemplates } from './templates';
import {
  TASK_TYPES,
  type ExecutorBlock,
  type Flow,
  type InputDeclaration,
  type Task,
  type TaskType,
} from './types';
import { loadYaml } from './yaml';
import { mapZodIssues } from './zod-issues';

export interface FlowContext {
  namespace: string;
  /** The file name without `.yaml`. */
  flowId: string;
}

export type ParseFlowResult = { ok: true; flow: Flow } | { ok: false; errors: ValidationIssue[] };

const FlowSchema = z.strictObject({
  // The id and namespace come from the file's location; the file may restate them, but only correctly.
  id: z.string().optional(),
  namespace: z.string().optional(),
  executor: ExecutorBlockSchema.optional(),
  retry: Retry.optional(),
  timeout: duration({ allowZero: false }).optional(),
  concurrency: z.int().min(1).optional(),
  max_parallel: z.int().min(1).optional(),
  schedule: Schedule.optional(),
  inputs: InputsSchema.optional(),
  connection: z.boolean().optional(),
  tasks: z.array(z.unknown()).min(1, 'a flow needs at least one task'),
});

function isTaskType(value: unknown): value is TaskType {
  return TASK_TYPES.some((t) => t === value);
}

function parseTask(raw: unknown, index: number, errors: ValidationIssue[]): Task | undefined {
  const at: PathSegment[] = ['tasks', index];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    errors.push(issue('invalid_type', formatPath(at), 'expected a task (a mapping with id and type)'));
    return undefined;
  }
  const type = (raw as Record<string, unknown>).type;
  if (type === undefined) {
    errors.push(
      issue('required', formatPath([...at, 'type']), `"type" is required: one of ${listWords(TASK_TYPES)}`),
    );
    return undefined;
  }
  if (!isTaskType(type)) {
    const suggestion = typeof type === 'string' ? didYouMean(type, TASK_TYPES) : '';
    errors.push(
      issue(
        'unknown_task_type',
        formatPath([...at, 'type']),
        `unknown task type ${JSON.stringify(type)}${suggestion}; expected ${listWords(TASK_TYPES)}`,
      ),
    );
    return undefined;
  }
  const schema: z.ZodType = TASK_SCHEMAS[type];
  const result = TASK_SCHEMAS[type].safeParse(raw);
  if (type !== 'http' && type !== 'subflow') {
    const block = (raw as Record<string, unknown>).executor;
    errors.push(...checkRawExecutorBlock(block, formatPath([...at, 'executor'])));
  }
  if (!result.success) {
    errors.push(...mapZodIssues(result.error.issues, { raw, schema, base: at, format: formatPath }));
    return undefined;
  }
  const { timeout, ...task } = result.data;
  return (timeout === undefined ? task : { ...task, timeoutMs: timeout }) as Task;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The declared inputs, checked and with converted defaults (undefined when
 * absent or when their shape is wrong, which FlowSchema reports), and the
 * names a template may use: every key written, so that a wrong declaration
 * does not also make each `{{ inputs.x }}` an error.
 */
function analyzeInputs(
  raw: Record<string, unknown>,
  errors: ValidationIssue[],
): { inputs?: Flow['inputs']; names: string[] } {
  if (!isRecord(raw.inputs)) return { names: [] };
  const names = Object.keys(raw.inputs);
  // Declaration by declaration, so one wrong entry does not hide the problems of the others.
  const valid: Record<string, InputDeclaration> = {};
  for (const [name, decl] of Object.entries(raw.inputs)) {
    const parsed = InputDeclarationSchema.safeParse(decl);
    if (INPUT_NAME_PATTERN.test(name) && parsed.success) valid[name] = parsed.data;
  }
  const checked = checkInputDeclarations(valid, raw.schedule !== undefined);
  errors.push(...checked.issues);
  return InputsSchema.safeParse(raw.inputs).success ? { inputs: checked.inputs, names } : { names };
}

function checkIdentity(data: z.output<typeof FlowSchema>, ctx: FlowContext, errors: ValidationIssue[]): void {
  if (data.id !== undefined && data.id !== ctx.flowId) {
    errors.push(
      issue('invalid_value', 'id', `the flow's id is its file name, "${ctx.flowId}"; got "${data.id}"`),
    );
  }
  if (data.namespace !== undefined && data.namespace !== ctx.namespace) {
    errors.push(
      issue(
        'invalid_value',
        'namespace',
        `this flow is in namespace "${ctx.namespace}"; got "${data.namespace}"`,
      ),
    );
  }
}

function checkNoSelfSubflow(
  tasks: readonly (Task | undefined)[],
  ctx: FlowContext,
  errors: ValidationIssue[],
): void {
  tasks.forEach((task, index) => {
    if (task?.type !== 'subflow') return;
    if (task.flow === ctx.flowId || task.flow === `${ctx.namespace}/${ctx.flowId}`) {
      errors.push(issue('invalid_value', `tasks[${index}].flow`, 'a flow cannot start itself as a subflow'));
    }
  });
}

/** What parsing found, including the parts that did parse when others did not. */
export interface FlowAnalysis {
  errors: ValidationIssue[];
  /** Set when there are no errors. */
  flow?: Flow;
  /** By file position; undefined where a task did not parse. */
  tasks: (Task | undefined)[];
  /** The flow-level executor block: absent, parsed, or 'invalid'. */
  executor: ExecutorBlock | undefined | 'invalid';
}

export function analyzeFlow(yamlText: string, ctx: FlowContext): FlowAnalysis {
  const loaded = loadYaml(yamlText);
  if (!loaded.ok) return { errors: loaded.errors, tasks: [], executor: 'invalid' };
  const raw = loaded.value;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    const errors = [issue('invalid_type', '', 'a flow file must be a mapping with at least "tasks"')];
    return { errors, tasks: [], executor: 'invalid' };
  }

  const errors: ValidationIssue[] = [];
  const top = FlowSchema.safeParse(raw);
  if (!top.success)
    errors.push(...mapZodIssues(top.error.issues, { raw, schema: FlowSchema, base: [], format: formatPath }));

  const rawTasks = (raw as Record<string, unknown>).tasks;
  const taskList = Array.isArray(rawTasks) ? rawTasks : [];
  const tasks = taskList.map((t, i) => parseTask(t, i, errors));
  const inputs = analyzeInputs(raw as Record<string, unknown>, errors);
  errors.push(...checkTaskGraph(taskList, inputs.names));
  const rawExecutor = (raw as Record<string, unknown>).executor;
  for (const t of findTemplates(rawExecutor, ['executor'])) {
    errors.push(
      issue('invalid_reference', formatPath(t.segments), 'templates are not rendered in an executor block'),
    );
  }
  errors.push(...checkRawExecutorBlock(rawExecutor, 'executor'));
  if (top.success) checkIdentity(top.data, ctx, errors);
  checkNoSelfSubflow(tasks, ctx, errors);

  if (errors.length > 0 || !top.success) {
    const parsedExecutor = ExecutorBlockSchema.optional().safeParse(rawExecutor);
    return { errors, tasks, executor: parsedExecutor.success ? parsedExecutor.data : 'invalid' };
  }
  const { executor, retry, timeout, concurrency, max_parallel: maxParallel, schedule, connection } = top.data;
  const flow: Flow = {
    id: ctx.flowId,
    namespace: ctx.namespace,
    ...(inputs.inputs && { inputs: inputs.inputs }),
    ...(executor && { executor }),
    ...(retry && { retry }),
    ...(timeout !== undefined && { timeoutMs: timeout }),
    ...(concurrency !== undefined && { concurrency }),
    ...(maxParallel !== undefined && { maxParallel }),
    ...(schedule !== undefined && { schedule }),
    ...(connection === true && { connection }),
    tasks: tasks as Task[],
  };
  return { errors, flow, tasks, executor };
}

/**
 * Parses and validates a flow file on its own: YAML, shape, task graph and
 * templates, every problem at once. Executor checks that need the merged
 * result (image_required, field_not_allowed across levels) are in
 * validateFlowAgainstNamespace; validateFlowFile runs both, as the API does.
 */
export function parseFlow(yamlText: string, ctx: FlowContext): ParseFlowResult {
  const { errors, flow } = analyzeFlow(yamlText, ctx);
  return flow ? { ok: true, flow } : { ok: false, errors };
}
