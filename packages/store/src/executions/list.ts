import type { ExecutionState } from '@sluice/protocol';
import { query, type Queryable } from '../handle';
import { toExecutionRecord, type ExecutionDbRow, type ExecutionRecord } from './rows';

/** Where a page of executions starts: after this one, in newest-first order. */
export interface ExecutionKey {
  createdAt: Date;
  id: string;
}

export interface ExecutionListFilter {
  workspace: string;
  namespace?: string;
  /** Only with `namespace`: a flow id is unique inside its namespace. */
  flowId?: string;
  state?: ExecutionState;
  /** created_at >= createdAfter */
  createdAfter?: Date;
  /** created_at < createdBefore */
  createdBefore?: Date;
}

export interface ExecutionPage {
  limit: number;
  /** The last execution of the previous page. */
  after?: ExecutionKey;
}

/**
 * The statement and its parameters for one combination of filters. The text
 * is built from constants only, one text per combination. The equality
 * columns pick the index — (workspace | workspace, namespace | workspace,
 * namespace, flow_id) followed by (created_at, id), migration
 * 20261201100000_list_indexes — and the keyset condition `(created_at, id) <
 * cursor` makes every page a backward range read of that index that stops at
 * the limit, however deep the page.
 */
export function listExecutionsQuery(
  filter: ExecutionListFilter,
  page: ExecutionPage,
): { text: string; values: unknown[] } {
  if (filter.flowId !== undefined && filter.namespace === undefined)
    throw new Error('listExecutions: a flow filter needs a namespace');
  const values: unknown[] = [];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  const where = [`workspace = ${param(filter.workspace)}`];
  if (filter.namespace !== undefined) where.push(`namespace = ${param(filter.namespace)}`);
  if (filter.flowId !== undefined) where.push(`flow_id = ${param(filter.flowId)}`);
  if (filter.state !== undefined) where.push(`state = ${param(filter.state)}`);
  if (filter.createdAfter) where.push(`created_at >= ${param(filter.createdAfter)}`);
  if (filter.createdBefore) where.push(`created_at < ${param(filter.createdBefore)}`);
  if (page.after)
    where.push(
      `(created_at, id) < (${param(page.after.createdAt)}::timestamptz, ${param(page.after.id)}::uuid)`,
    );
  const text = `SELECT * FROM executions WHERE ${where.join(' AND ')}
     ORDER BY created_at DESC, id DESC LIMIT ${param(page.limit)}`;
  return { text, values };
}

/**
 * One page of a workspace's executions, newest first: at most `limit`, after
 * `after`. Executions created while a client pages are newer than its
 * cursor, so they never shift later pages: every execution that existed when
 * the first page was read is listed exactly once.
 */
export async function listExecutions(
  db: Queryable,
  filter: ExecutionListFilter,
  page: ExecutionPage,
): Promise<ExecutionRecord[]> {
  const { text, values } = listExecutionsQuery(filter, page);
  const { rows } = await query<ExecutionDbRow>(db, text, values);
  return rows.map(toExecutionRecord);
}
