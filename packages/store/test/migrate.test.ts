import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { DEFAULT_MIGRATIONS_DIR, migrate, readMigrations } from '@sluice/store';

async function migrationRows(url: string) {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(
      'SELECT migration_name, checksum, finished_at, applied_steps_count, rolled_back_at FROM _prisma_migrations ORDER BY migration_name',
    );
    return rows as Array<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      applied_steps_count: number;
    }>;
  } finally {
    await c.end();
  }
}

describe('migrate', () => {
  const dbs: TestDatabase[] = [];
  const dirs: string[] = [];
  const emptyDb = async () => {
    const db = await createTestDatabase({ empty: true });
    dbs.push(db);
    return db;
  };
  const copyOfMigrations = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sluice-migrations-'));
    dirs.push(dir);
    cpSync(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
    return dir;
  };
  afterAll(async () => {
    await Promise.all(dbs.map((d) => d.drop()));
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  });

  it('applies every migration once; a second run is a no-op', async () => {
    const db = await emptyDb();
    const names = readMigrations().map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);
    const logged: string[] = [];
    expect(await migrate(db.url, { log: (m) => logged.push(m) })).toEqual({ applied: names });
    expect(logged).toHaveLength(names.length);
    expect(await migrate(db.url)).toEqual({ applied: [] });
    expect((await migrationRows(db.url)).map((r) => r.migration_name)).toEqual(names);
  });

  it('two runners at once on an empty database apply each migration exactly once, with Prisma bookkeeping', async () => {
    const db = await emptyDb();
    const [a, b] = await Promise.all([migrate(db.url), migrate(db.url)]);
    const files = readMigrations();
    expect([...a.applied, ...b.applied].sort()).toEqual(files.map((m) => m.name).sort());

    const rows = await migrationRows(db.url);
    expect(rows).toHaveLength(files.length);
    for (const m of files) {
      const row = rows.find((r) => r.migration_name === m.name);
      const sha = createHash('sha256')
        .update(readFileSync(path.join(DEFAULT_MIGRATIONS_DIR, m.name, 'migration.sql')))
        .digest('hex');
      expect(row).toMatchObject({ checksum: sha, applied_steps_count: 1, rolled_back_at: null });
      expect(row?.finished_at).toBeInstanceOf(Date);
    }
  });

  it('refuses a migration changed after it was applied, naming it', async () => {
    const db = await emptyDb();
    const dir = copyOfMigrations();
    await migrate(db.url, { migrationsDir: dir });
    const first = readMigrations(dir)[0]!;
    appendFileSync(path.join(dir, first.name, 'migration.sql'), '\n-- edited\n');
    await expect(migrate(db.url, { migrationsDir: dir })).rejects.toThrow(
      new RegExp(`migration ${first.name} was modified after it was applied`),
    );
  });

  it('rolls a failing migration back entirely and applies the next one once it is fixed', async () => {
    const db = await emptyDb();
    const dir = copyOfMigrations();
    await migrate(db.url, { migrationsDir: dir });
    const name = '29990101000000_broken';
    const file = path.join(dir, name, 'migration.sql');
    mkdirSync(path.dirname(file));
    writeFileSync(file, 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n');
    await expect(migrate(db.url, { migrationsDir: dir })).rejects.toThrow(
      /migration 29990101000000_broken failed/,
    );

    const c = new Client({ connectionString: db.url });
    await c.connect();
    const { rows } = await c.query("SELECT to_regclass('half_done') AS t");
    await c.end();
    expect(rows[0].t).toBeNull();
    expect((await migrationRows(db.url)).map((r) => r.migration_name)).not.toContain(name);

    writeFileSync(file, 'CREATE TABLE half_done (id int);\n');
    expect(await migrate(db.url, { migrationsDir: dir })).toEqual({ applied: [name] });
  });

  it('is blocked by a failed migration recorded by Prisma itself, as prisma migrate deploy is', async () => {
    const db = await emptyDb();
    await migrate(db.url);
    const c = new Client({ connectionString: db.url });
    await c.connect();
    await c.query(
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at) VALUES (gen_random_uuid(), 'x', '20270101000000_half', now())`,
    );
    await c.end();
    await expect(migrate(db.url)).rejects.toThrow(
      /migration 20270101000000_half failed earlier and is not resolved/,
    );
  });
});
