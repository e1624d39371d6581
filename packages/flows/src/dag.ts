import type { Flow, Task } from './types';

/*
 * The task graph of a parsed flow. parseFlow guarantees ids are unique, every
 * depends_on entry names a task, and there is no cycle.
 */

/** Tasks that depend on nothing: the first to queue when an execution starts. */
export function roots(flow: Flow): Task[] {
  return flow.tasks.filter((task) => (task.depends_on ?? []).length === 0);
}

/** Tasks that list `taskId` in their depends_on (direct dependents only). */
export function dependentsOf(flow: Flow, taskId: string): Task[] {
  return flow.tasks.filter((task) => (task.depends_on ?? []).includes(taskId));
}

/** Whether every task `task` depends on has succeeded. */
export function isReady(task: Task, succeededTaskIds: ReadonlySet<string> | readonly string[]): boolean {
  const succeeded = succeededTaskIds instanceof Set ? succeededTaskIds : new Set(succeededTaskIds);
  return (task.depends_on ?? []).every((id) => succeeded.has(id));
}

/** Every task downstream of `taskId`, transitively: what cannot run once it has failed for good. */
export function downstreamOf(flow: Flow, taskId: string): Task[] {
  const found = new Set<string>();
  const queue = [taskId];
  for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
    for (const dependent of dependentsOf(flow, id)) {
      if (!found.has(dependent.id)) {
        found.add(dependent.id);
        queue.push(dependent.id);
      }
    }
  }
  return flow.tasks.filter((task) => found.has(task.id));
}

/** Task ids in an order where each task comes after everything it depends on (file order among peers). */
export function topologicalOrder(flow: Flow): string[] {
  const order: string[] = [];
  const done = new Set<string>();
  let pending = flow.tasks;
  while (pending.length > 0) {
    const ready = pending.filter((task) => isReady(task, done));
    if (ready.length === 0) throw new Error(`flow ${flow.namespace}/${flow.id} has a dependency cycle`);
    for (const task of ready) {
      order.push(task.id);
      done.add(task.id);
    }
    pending = pending.filter((task) => !done.has(task.id));
  }
  return order;
}
