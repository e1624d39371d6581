import type { ValidationIssue } from '@sluice/protocol';
import { didYouMean, formatPath, issue } from './issues';
import { TASK_ID_PATTERN } from './schema/fields';
import { findTemplates } from './templates';

/*
 * Checks across tasks: ids, depends_on, cycles and template references. They
 * run on the raw tasks, so a task whose own fields are wrong still takes part
 * and every problem of the file is reported in one pass.
 */

interface Node {
  index: number;
  id: string | undefined;
  deps: { name: string; position: number }[];
  fields: Record<string, unknown> | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function toNodes(rawTasks: readonly unknown[]): Node[] {
  return rawTasks.map((raw, index) => {
    const fields = isRecord(raw) ? raw : undefined;
    const id = typeof fields?.id === 'string' && TASK_ID_PATTERN.test(fields.id) ? fields.id : undefined;
    const deps = Array.isArray(fields?.depends_on)
      ? fields.depends_on.flatMap((name: unknown, position) =>
          typeof name === 'string' ? [{ name, position }] : [],
        )
      : [];
    return { index, id, deps, fields };
  });
}

/** Each id's first task (later duplicates are reported and otherwise ignored). */
function indexById(nodes: readonly Node[], out: ValidationIssue[]): Map<string, Node> {
  const byId = new Map<string, Node>();
  for (const node of nodes) {
    if (node.id === undefined) continue;
    const first = byId.get(node.id);
    if (first) {
      out.push(
        issue(
          'duplicate_task_id',
          `tasks[${node.index}].id`,
          `task id "${node.id}" is already used by tasks[${first.index}]`,
        ),
      );
    } else {
      byId.set(node.id, node);
    }
  }
  return byId;
}

function checkDependencies(nodes: readonly Node[], byId: Map<string, Node>, out: ValidationIssue[]): void {
  const ids = [...byId.keys()];
  for (const node of nodes) {
    for (const dep of node.deps) {
      if (byId.has(dep.name)) continue;
      out.push(
        issue(
          'unknown_dependency',
          `tasks[${node.index}].depends_on[${dep.position}]`,
          `"${dep.name}" is not a task of this flow${didYouMean(dep.name, ids)}`,
        ),
      );
    }
  }
}

/** Every distinct cycle, found by an iterative depth-first search (no recursion limit on long chains). */
function checkCycles(byId: Map<string, Node>, out: ValidationIssue[]): void {
  const state = new Map<string, 'open' | 'done'>();
  const reported = new Set<string>();
  for (const root of byId.values()) {
    if (state.has(root.id as string)) continue;
    const stack: { node: Node; next: number }[] = [{ node: root, next: 0 }];
    state.set(root.id as string, 'open');
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { node: Node; next: number };
      const dep = top.node.deps[top.next++];
      if (!dep) {
        state.set(top.node.id as string, 'done');
        stack.pop();
        continue;
      }
      const target = byId.get(dep.name);
      if (!target) continue;
      const seen = state.get(dep.name);
      if (seen === undefined) {
        state.set(dep.name, 'open');
        stack.push({ node: target, next: 0 });
      } else if (seen === 'open') {
        const members = stack.slice(stack.findIndex((f) => f.node === target)).map((f) => f.node);
        reportCycle(members, reported, out);
      }
    }
  }
}

function reportCycle(members: Node[], reported: Set<string>, out: ValidationIssue[]): void {
  const key = members
    .map((m) => m.index)
    .sort((a, b) => a - b)
    .join(',');
  if (reported.has(key)) return;
  reported.add(key);
  // Start at the task that comes first in the file, so the report does not depend on search order.
  const start = members.reduce((best, m, i) => (m.index < (members[best] as Node).index ? i : best), 0);
  const ordered = [...members.slice(start), ...members.slice(0, start)];
  const first = ordered[0] as Node;
  const second = (ordered[1] ?? first) as Node;
  const position = first.deps.find((d) => d.name === second.id)?.position ?? 0;
  // A generated flow can have a loop of thousands of tasks: name the first few and count the rest.
  const shown =
    ordered.length > 12
      ? [...ordered.slice(0, 10).map((m) => m.id), `… ${ordered.length - 10} more`]
      : ordered.map((m) => m.id);
  const loop = [...shown, first.id].join(' → ');
  out.push(
    issue(
      'dependency_cycle',
      `tasks[${first.index}].depends_on[${position}]`,
      `dependency cycle: ${loop} (→ reads "depends on")`,
    ),
  );
}

/** Task ids `node` depends on, directly or through other tasks. */
function upstreamOf(node: Node, byId: Map<string, Node>): Set<string> {
  const seen = new Set<string>();
  const queue = node.deps.map((d) => d.name);
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (seen.has(name)) continue;
    const dep = byId.get(name);
    if (!dep) continue;
    seen.add(name);
    queue.push(...dep.deps.map((d) => d.name));
  }
  return seen;
}

const LITERAL_HINT =
  'only {{ outputs.<task>.<key> }} and {{ inputs.<name> }} are templates (write \\{{ for a literal "{{")';

function inputProblem(name: string, inputs: readonly string[]): string | undefined {
  if (inputs.includes(name)) return undefined;
  // Without declared inputs the author may have meant a literal "{{" (a Jinja or Go template).
  if (inputs.length === 0) return `no input "${name}": the flow declares no inputs; ${LITERAL_HINT}`;
  return `no input "${name}" in this flow's inputs${didYouMean(name, inputs)}; declared: ${inputs.join(', ')}`;
}

function checkTemplates(
  nodes: readonly Node[],
  byId: Map<string, Node>,
  inputs: readonly string[],
  out: ValidationIssue[],
): void {
  for (const node of nodes) {
    if (!node.fields) continue;
    let upstream: Set<string> | undefined; // computed on first use: most tasks reference nothing
    const self = node.id ?? `tasks[${node.index}]`;
    for (const [field, value] of Object.entries(node.fields)) {
      if (field === 'id' || field === 'type' || field === 'depends_on') continue;
      for (const t of findTemplates(value, ['tasks', node.index, field])) {
        const path = formatPath(t.segments);
        let problem: string | undefined;
        if (field === 'executor') problem = 'templates are not rendered in an executor block';
        else if (t.input !== undefined) problem = inputProblem(t.input, inputs);
        else if (!t.ref) problem = `"{{ ${t.expression} }}" is not an output reference: ${LITERAL_HINT}`;
        else if (!byId.has(t.ref.task)) {
          problem = `no task "${t.ref.task}" in this flow${didYouMean(t.ref.task, [...byId.keys()])}`;
        } else if (t.ref.task === node.id) problem = `task "${self}" cannot use its own outputs`;
        else if (!(upstream ??= upstreamOf(node, byId)).has(t.ref.task)) {
          problem = `task "${t.ref.task}" is not upstream of "${self}": add it to depends_on (directly or through another task)`;
        }
        if (problem) out.push(issue('invalid_reference', path, problem));
      }
    }
  }
}

/** `inputs`: the names the flow's `inputs` declares, for `{{ inputs.<name> }}`. */
export function checkTaskGraph(
  rawTasks: readonly unknown[],
  inputs: readonly string[] = [],
): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const nodes = toNodes(rawTasks);
  const byId = indexById(nodes, out);
  checkDependencies(nodes, byId, out);
  checkCycles(byId, out);
  checkTemplates(nodes, byId, inputs, out);
  return out;
}
