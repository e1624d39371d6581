import { prismaOf, query, type Queryable, type Store } from '../handle';
import type { NamespaceKey } from '../workspaces';

export interface NamespaceFileInfo {
  path: string;
  sha256: string;
  size: number;
  updatedAt: Date;
}

/**
 * The files of a namespace without their content, by path: all of them, or
 * one page of at most `limit` after the path `after` (the primary key serves both).
 */
export async function listNamespaceFiles(
  db: Queryable,
  ns: NamespaceKey,
  page: { limit?: number; after?: string } = {},
): Promise<NamespaceFileInfo[]> {
  const r = await query<{ path: string; sha256: string; size: number; updated_at: Date }>(
    db,
    `SELECT path, sha256, octet_length(content) AS size, updated_at FROM namespace_files
     WHERE workspace = $1 AND namespace = $2 AND ($3::text IS NULL OR path > $3)
     ORDER BY path LIMIT $4`,
    [ns.workspace, ns.namespace, page.after ?? null, page.limit ?? null],
  );
  return r.rows.map((row) => ({
    path: row.path,
    sha256: row.sha256,
    size: Number(row.size),
    updatedAt: row.updated_at,
  }));
}

/** One file's content; null when there is none at `path`. */
export async function getNamespaceFile(store: Store, ns: NamespaceKey, path: string): Promise<Buffer | null> {
  const file = await prismaOf(store).namespaceFile.findUnique({
    where: { workspace_namespace_path: { workspace: ns.workspace, namespace: ns.namespace, path } },
  });
  return file ? Buffer.from(file.content) : null;
}

/** One file's content, by SQL so it also runs inside a transaction; null when there is none. */
export async function readNamespaceFile(
  db: Queryable,
  ns: NamespaceKey,
  path: string,
): Promise<Buffer | null> {
  const r = await query<{ content: Buffer }>(
    db,
    'SELECT content FROM namespace_files WHERE workspace = $1 AND namespace = $2 AND path = $3',
    [ns.workspace, ns.namespace, path],
  );
  return r.rows[0]?.content ?? null;
}

/** Every file of a namespace with its content (what a snapshot bundles). */
export async function readNamespaceFiles(
  db: Queryable,
  ns: NamespaceKey,
): Promise<Array<{ path: string; content: Buffer }>> {
  const r = await query<{ path: string; content: Buffer }>(
    db,
    'SELECT path, content FROM namespace_files WHERE workspace = $1 AND namespace = $2',
    [ns.workspace, ns.namespace],
  );
  return r.rows;
}
