import { query, type Queryable } from '../handle';

/** Stores a content-addressed bundle once: a second insert of the same id is a no-op. */
export async function insertSnapshot(db: Queryable, snapshot: { id: string; bundle: Buffer }): Promise<void> {
  await query(
    db,
    'INSERT INTO snapshots (id, bundle, size) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING',
    [snapshot.id, snapshot.bundle, snapshot.bundle.length],
  );
}
