import { query, type Queryable } from '../handle';

/**
 * The namespaces of a workspace, by name, after `after`. There is no
 * namespaces table (docs/store.md#workspaces): a namespace exists while a
 * flow, file, secret or execution of it is stored. Flows, files and secrets
 * are read through their primary keys; executions, which can be many, are
 * walked one namespace at a time on (workspace, namespace, created_at, id) —
 * a loose index scan, since PostgreSQL 15 has no skip scan — so the cost is
 * one index probe per namespace, not one row per execution.
 */
export const LIST_NAMESPACES_SQL = `
  WITH RECURSIVE execution_namespaces(namespace) AS (
    (SELECT namespace FROM executions WHERE workspace = $1 AND namespace > $2 ORDER BY namespace LIMIT 1)
    UNION ALL
    SELECT (SELECT e.namespace FROM executions e
            WHERE e.workspace = $1 AND e.namespace > n.namespace ORDER BY e.namespace LIMIT 1)
    FROM execution_namespaces n WHERE n.namespace IS NOT NULL
  )
  SELECT namespace FROM (
    SELECT namespace FROM execution_namespaces WHERE namespace IS NOT NULL
    UNION SELECT DISTINCT namespace FROM flows WHERE workspace = $1 AND namespace > $2
    UNION SELECT DISTINCT namespace FROM namespace_files WHERE workspace = $1 AND namespace > $2
    UNION SELECT DISTINCT namespace FROM secrets WHERE workspace = $1 AND namespace > $2
  ) AS all_namespaces
  ORDER BY namespace LIMIT $3`;

export async function listNamespaces(
  db: Queryable,
  workspace: string,
  page: { limit: number; after?: string },
): Promise<string[]> {
  const { rows } = await query<{ namespace: string }>(db, LIST_NAMESPACES_SQL, [
    workspace,
    page.after ?? '',
    page.limit,
  ]);
  return rows.map((r) => r.namespace);
}
