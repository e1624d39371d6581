import type { ResolvedExecutor, SelectableExecutorType, ValidationIssue } from '@sluice/protocol';
import { issue, NAMESPACE_FILE, type ValidationCode } from './issues';
import { ACCEPTED_EXECUTOR_FIELDS, acceptsField, ExecutorBlockSchema } from './schema/executor-block';
import {
  isInlineTask,
  type ExecutorBlock,
  type ExecutorField,
  type Flow,
  type NamespaceConfig,
  type Task,
} from './types';

/*
 * Which executor a task gets: four levels merged field by field, task > flow
 * > namespace.yaml `defaults.executor` > instance default (process, pool
 * "default"). A level replaces only the fields it sets, so a task can set
 * just `pool` and keep the flow's type and image.
 *
 * The validator checks the merged block: a field its merged type does not
 * accept is field_not_allowed, wherever it came from. A field written in the
 * block that chose the type or a more specific one (or anywhere, when the
 * type is the instance default) is reported where it is written. A field
 * inherited from a less specific level than the one that chose the type (a
 * namespace `service_account` under a task's `type: docker`) is reported at
 * the block that chose the type, and the message names the level that set
 * the field: those two blocks are what the author has to reconcile. resolveExecutor leaves such fields out,
 * so an execution never hands an executor a field it cannot use.
 */

export const INSTANCE_DEFAULT_EXECUTOR = {
  type: 'process',
  pool: 'default',
} as const satisfies ResolvedExecutor;
export const INLINE_EXECUTOR = { type: 'inline', pool: '' } as const satisfies ResolvedExecutor;

const FIELDS: readonly Exclude<ExecutorField, 'type'>[] = [
  'pool',
  'image',
  'inject_runner',
  'resources',
  'pull',
  'node_selector',
  'tolerations',
  'service_account',
];

/** Path prefixes of the three written levels. */
export const NAMESPACE_EXECUTOR_PATH = `${NAMESPACE_FILE}:defaults.executor`;
export const FLOW_EXECUTOR_PATH = 'executor';
export const taskExecutorPath = (index: number): string => `tasks[${index}].executor`;

interface Level {
  block: ExecutorBlock | undefined;
  /** Where the block is written, e.g. `tasks[2].executor`. */
  path: string;
  /** How a message names the level; undefined for the task's own block. */
  name: string | undefined;
}

interface Rejected {
  field: ExecutorField;
  level: Level;
  /** Set at a less specific level than the one that chose the type. */
  inherited: boolean;
}

interface Merged {
  resolved: ResolvedExecutor & { type: SelectableExecutorType };
  /** Path of the block that chose the type; undefined when it is the instance default. */
  typePath: string | undefined;
  /** Fields the merged type does not accept, with the level that set them. */
  rejected: Rejected[];
}

/** `levels` from most specific (task) to least (namespace). */
function merge(levels: readonly Level[]): Merged {
  const typeLevel = levels.findIndex((l) => l.block?.type !== undefined);
  const type =
    typeLevel === -1
      ? INSTANCE_DEFAULT_EXECUTOR.type
      : (levels[typeLevel]?.block?.type as SelectableExecutorType);
  // Levels at or before this index chose or accepted the type; fields from later levels are inherited.
  const chosenAt = typeLevel === -1 ? levels.length : typeLevel;
  const resolved: Record<string, unknown> = { type, pool: INSTANCE_DEFAULT_EXECUTOR.pool };
  const rejected: Merged['rejected'] = [];
  for (const field of FIELDS) {
    const index = levels.findIndex((l) => l.block?.[field] !== undefined);
    if (index === -1) continue;
    const level = levels[index] as Level;
    if (acceptsField(type, field)) resolved[field] = level.block?.[field];
    else rejected.push({ field, level, inherited: index > chosenAt });
  }
  if (type !== 'process' && resolved.inject_runner === undefined) resolved.inject_runner = true;
  return {
    resolved: resolved as Merged['resolved'],
    typePath: typeLevel === -1 ? undefined : levels[typeLevel]?.path,
    rejected,
  };
}

function levelsOf(
  task: Task,
  taskPath: string,
  flowExecutor: ExecutorBlock | undefined,
  namespaceDefaults: ExecutorBlock | undefined,
): Level[] {
  return [
    { block: isInlineTask(task) ? undefined : task.executor, path: taskPath, name: undefined },
    { block: flowExecutor, path: FLOW_EXECUTOR_PATH, name: "the flow's executor" },
    { block: namespaceDefaults, path: NAMESPACE_EXECUTOR_PATH, name: `${NAMESPACE_FILE} defaults.executor` },
  ];
}

/**
 * The executor a task runs on. http and subflow tasks always run inline
 * (no pool). Fields the merged type does not accept are left out; validate
 * with validateFlowAgainstNamespace to report them.
 */
export function resolveExecutor(task: Task, flow: Flow, namespaceDefaults?: ExecutorBlock): ResolvedExecutor {
  if (isInlineTask(task)) return { ...INLINE_EXECUTOR };
  return merge(levelsOf(task, 'task.executor', flow.executor, namespaceDefaults)).resolved;
}

/** A single block that sets its own `type` and a field that type does not accept. */
export function checkExecutorBlock(block: ExecutorBlock, path: string): ValidationIssue[] {
  const type = block.type;
  if (type === undefined) return [];
  return FIELDS.filter((field) => block[field] !== undefined && !acceptsField(type, field)).map((field) =>
    issue('field_not_allowed', `${path}.${field}`, notAccepted(field, type)),
  );
}

/** checkExecutorBlock on a block that has not been parsed yet (its own shape errors are reported elsewhere). */
export function checkRawExecutorBlock(raw: unknown, path: string): ValidationIssue[] {
  if (raw === undefined) return [];
  const parsed = ExecutorBlockSchema.safeParse(raw);
  return parsed.success ? checkExecutorBlock(parsed.data, path) : [];
}

function notAccepted(field: ExecutorField, type: SelectableExecutorType, setBy?: string): string {
  const origin = setBy === undefined ? '' : ` (set by ${setBy})`;
  return `"${field}"${origin} is not accepted by the ${type} executor, which takes ${ACCEPTED_EXECUTOR_FIELDS[type].join(', ')}`;
}

/** Issues of one (code, path), the tasks they concern gathered into one message. */
class IssueGroups {
  private readonly groups = new Map<
    string,
    { code: ValidationCode; path: string; message: string; tasks: string[] }
  >();

  add(code: ValidationCode, path: string, message: string, taskId: string): void {
    const key = `${code} ${path}`;
    const group = this.groups.get(key);
    if (group) group.tasks.push(taskId);
    else this.groups.set(key, { code, path, message, tasks: [taskId] });
  }

  list(): ValidationIssue[] {
    return [...this.groups.values()].map((g) =>
      issue(g.code, g.path, `${g.message} (task${g.tasks.length > 1 ? 's' : ''} ${g.tasks.join(', ')})`),
    );
  }
}

function checkConnectorEndpoints(
  task: Task,
  index: number,
  type: SelectableExecutorType,
  groups: IssueGroups,
): void {
  const endpoints =
    task.type === 'connector'
      ? [['connector', task.connector] as const]
      : task.type === 'sync'
        ? ([
            ['source', task.source],
            ['destination', task.destination],
          ] as const)
        : [];
  for (const [name, endpoint] of endpoints) {
    if (type === 'process' && endpoint.command === undefined) {
      const message = `on the process executor the ${name} runs as a command: set "${name}.command"`;
      groups.add('required', `tasks[${index}].${name}.command`, message, task.id);
    } else if (type !== 'process' && endpoint.image === undefined) {
      const message = `on the ${type} executor the ${name} runs as a container: set "${name}.image"`;
      groups.add('image_required', `tasks[${index}].${name}.image`, message, task.id);
    }
  }
}

/**
 * The checks that need the merged executor of every task: image_required,
 * field_not_allowed for fields that meet an incompatible type from another
 * level (in either direction), and the connector image/command each
 * executor type needs. A problem written once at flow or namespace level is
 * reported once, naming its tasks.
 */
export function validateFlowAgainstNamespace(
  flow: Flow,
  namespaceConfig?: NamespaceConfig,
): ValidationIssue[] {
  return mergedExecutorIssues(
    flow.tasks,
    flow.executor,
    namespaceConfig?.defaults?.executor,
    namespaceConfig?.allowed_executors,
  );
}

/**
 * validateFlowAgainstNamespace over the tasks that parsed (`undefined` where one did not), by
 * file position. With `allowed` (namespace.yaml `allowed_executors`), a task whose merged type
 * is not in it is executor_type_not_allowed, reported where its type is chosen.
 */
export function mergedExecutorIssues(
  tasks: readonly (Task | undefined)[],
  flowExecutor: ExecutorBlock | undefined,
  namespaceDefaults: ExecutorBlock | undefined,
  allowed?: readonly SelectableExecutorType[],
): ValidationIssue[] {
  const groups = new IssueGroups();
  tasks.forEach((task, index) => {
    if (!task || isInlineTask(task)) return;
    const levels = levelsOf(task, taskExecutorPath(index), flowExecutor, namespaceDefaults);
    const { resolved, typePath, rejected } = merge(levels);
    if (allowed && !allowed.includes(resolved.type)) {
      const origin = typePath
        ? ''
        : `; its type is the instance default (${resolved.type}): set executor.type in the task or flow, or defaults.executor.type in ${NAMESPACE_FILE}`;
      groups.add(
        'executor_type_not_allowed',
        `${typePath ?? taskExecutorPath(index)}.type`,
        `the ${resolved.type} executor is not allowed in this namespace (${NAMESPACE_FILE} allowed_executors: ${allowed.join(', ')})${origin}`,
        task.id,
      );
    }
    for (const { field, level, inherited } of rejected) {
      if (level.path === typePath) continue; // a block contradicting its own type: checkExecutorBlock reported it
      const origin = typePath ? `its type is set at ${typePath}.type` : 'its type is the instance default';
      // An inherited field is not written in the block that chose the type; point there, as image_required does.
      const path = inherited && typePath ? `${typePath}.${field}` : `${level.path}.${field}`;
      groups.add(
        'field_not_allowed',
        path,
        `${notAccepted(field, resolved.type, level.name)}; ${origin}`,
        task.id,
      );
    }
    if (task.type === 'connector' || task.type === 'sync') {
      checkConnectorEndpoints(task, index, resolved.type, groups);
    } else if (resolved.type !== 'process' && resolved.image === undefined) {
      groups.add(
        'image_required',
        `${typePath}.image`,
        `a ${resolved.type} executor needs an image`,
        task.id,
      );
    }
  });
  return groups.list();
}
