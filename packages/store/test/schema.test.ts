import path from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { readPrismaModels } from './prisma-schema';

// The migrations are written by hand; this keeps them and schema.prisma from
// drifting apart in either direction (a column, type, nullability, default,
// index or foreign key missing on one side fails here).

const SCHEMA = path.resolve(__dirname, '../prisma/schema.prisma');
const HAND_WRITTEN_INDEXES = ['task_runs_claim_idx', 'task_runs_active_idx', 'events_pending_idx'];

describe('migrated schema matches schema.prisma', () => {
  let db: TestDatabase;
  let c: Client;
  const models = readPrismaModels(SCHEMA);

  beforeAll(async () => {
    db = await createTestDatabase();
    c = new Client({ connectionString: db.url });
    await c.connect();
  });
  afterAll(async () => {
    await c.end();
    await db.drop();
  });

  it('compares task ids byte by byte (COLLATE "C", which schema.prisma cannot express)', async () => {
    const { rows } = await c.query(
      `SELECT collation_name FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name = 'task_runs' AND column_name = 'task_id'`,
    );
    expect(rows).toEqual([{ collation_name: 'C' }]);
  });

  it('has exactly the tables of the models', async () => {
    const { rows } = await c.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> '_prisma_migrations' ORDER BY 1`,
    );
    expect(rows.map((r) => r.table_name)).toEqual(models.map((m) => m.table).sort());
  });

  it.each(models.map((m) => [m.table, m] as const))(
    '%s: columns, types, nullability, defaults',
    async (table, model) => {
      const { rows } = await c.query(
        `SELECT column_name, udt_name, is_nullable, column_default, datetime_precision
       FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY column_name`,
        [table],
      );
      const actual = rows.map((r) => ({
        column: r.column_name,
        udt: r.udt_name,
        nullable: r.is_nullable === 'YES',
        hasDefault: r.column_default !== null,
      }));
      const expected = [...model.fields].sort((a, b) => (a.column < b.column ? -1 : 1));
      expect(actual).toEqual(expected);
      // Prisma's DateTime columns here are all @db.Timestamptz(3).
      for (const r of rows.filter((x) => x.udt_name === 'timestamptz')) expect(r.datetime_precision).toBe(3);
    },
  );

  it.each(models.map((m) => [m.table, m] as const))(
    '%s: primary key, unique and plain indexes',
    async (table, model) => {
      const { rows } = await c.query(
        `SELECT i.relname AS name, ix.indisunique AS uniq, ix.indisprimary AS pk,
              array_agg(a.attname ORDER BY k.ord)::text[] AS columns
       FROM pg_index ix
       JOIN pg_class i ON i.oid = ix.indexrelid
       JOIN pg_class t ON t.oid = ix.indrelid
       JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
       WHERE t.relname = $1 AND t.relnamespace = 'public'::regnamespace
       GROUP BY i.relname, ix.indisunique, ix.indisprimary ORDER BY i.relname`,
        [table],
      );
      const expected = [
        { name: `${table}_pkey`, uniq: true, pk: true, columns: model.primaryKey },
        ...model.uniques.map((cols) => ({
          name: `${table}_${cols.join('_')}_key`,
          uniq: true,
          pk: false,
          columns: cols,
        })),
        ...model.indexes.map((cols) => ({
          name: `${table}_${cols.join('_')}_idx`,
          uniq: false,
          pk: false,
          columns: cols,
        })),
      ].sort((a, b) => (a.name < b.name ? -1 : 1));
      expect(rows.filter((r) => !HAND_WRITTEN_INDEXES.includes(r.name))).toEqual(expected);
    },
  );

  it.each(models.map((m) => [m.table, m] as const))('%s: foreign keys', async (table, model) => {
    const { rows } = await c.query(
      `SELECT con.conname AS name, ref.relname AS referenced, con.confdeltype AS on_delete, con.confupdtype AS on_update
       FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid JOIN pg_class ref ON ref.oid = con.confrelid
       WHERE con.contype = 'f' AND t.relname = $1 ORDER BY 1`,
      [table],
    );
    const code: Record<string, string> = { Cascade: 'c', Restrict: 'r', NoAction: 'a', SetNull: 'n' };
    expect(rows).toEqual(
      model.relations.map((r) => ({
        name: `${table}_${r.columns.join('_')}_fkey`,
        referenced: r.referencedTable,
        on_delete: code[r.onDelete],
        on_update: 'c',
      })),
    );
  });

  it('has the partial claim index on queued task runs', async () => {
    const { rows } = await c.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'task_runs_claim_idx'`);
    expect(rows[0]?.indexdef).toMatch(/WHERE \(state = 'QUEUED'::text\)/);
  });

  it('indexes only active task runs, on columns a heartbeat never changes', async () => {
    const { rows } = await c.query(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'task_runs_active_idx'`,
    );
    expect(rows[0]?.indexdef).toMatch(
      /\(executor_type, pool\) WHERE \(state = ANY \(ARRAY\['STARTING'::text, 'RUNNING'::text\]\)\)/,
    );
    const heartbeatIndexed = await c.query(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'task_runs' AND indexdef LIKE '%heartbeat_at%'`,
    );
    expect(heartbeatIndexed.rows).toEqual([]);
  });
});
