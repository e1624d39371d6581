import { query, type Queryable } from '../handle';

export async function readSnapshot(db: Queryable, id: string): Promise<Buffer | null> {
  const r = await query<{ bundle: Buffer }>(db, 'SELECT bundle FROM snapshots WHERE id = $1', [id]);
  return r.rows[0]?.bundle ?? null;
}

/** The bundle's size in bytes; 0 when there is no such snapshot. */
export async function snapshotSize(db: Queryable, id: string): Promise<number> {
  const r = await query<{ size: number }>(db, 'SELECT size FROM snapshots WHERE id = $1', [id]);
  return Number(r.rows[0]?.size ?? 0);
}
