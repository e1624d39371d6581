import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';

/**
 * Applies prisma/migrations/<name>/migration.sql in name order and records
 * each in `_prisma_migrations` exactly as `prisma migrate deploy` does, so the
 * real Prisma CLI (wherever its schema engine is available) agrees with us.
 *
 * Prisma's CLI cannot run here (its schema engine is downloaded at run time),
 * hence this small runner over `pg`.
 */

/** Same key as Prisma's schema engine, so our runner and `prisma migrate deploy` exclude each other. */
export const MIGRATION_ADVISORY_LOCK_KEY = 72707369;

/** src/ and dist/ are siblings, so this resolves from the sources (tests) and from the build alike. */
export const DEFAULT_MIGRATIONS_DIR = path.resolve(__dirname, '../prisma/migrations');

export interface MigrateOptions {
  log?: (msg: string) => void;
  migrationsDir?: string;
}

export interface MigrationFile {
  name: string;
  sql: string;
  /** sha256 hex of the file's bytes, as Prisma computes it. */
  checksum: string;
}

export class MigrationError extends Error {
  constructor(
    readonly migrationName: string,
    message: string,
  ) {
    super(message);
    this.name = 'MigrationError';
  }
}

// Prisma's own DDL for its bookkeeping table, column for column.
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export function checksumOf(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The migration folders in the order Prisma applies them (lexicographic by folder name). */
export function readMigrations(migrationsDir: string = DEFAULT_MIGRATIONS_DIR): MigrationFile[] {
  if (!existsSync(migrationsDir)) {
    throw new Error(`migrationsDir ${migrationsDir} does not exist`);
  }
  return readdirSync(migrationsDir)
    .filter((name) => statSync(path.join(migrationsDir, name)).isDirectory())
    .sort()
    .map((name) => {
      const file = path.join(migrationsDir, name, 'migration.sql');
      if (!existsSync(file))
        throw new MigrationError(name, `migration ${name} has no migration.sql (${file})`);
      const bytes = readFileSync(file);
      return { name, sql: bytes.toString('utf8'), checksum: checksumOf(bytes) };
    });
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export async function migrate(
  databaseUrl: string,
  opts: MigrateOptions = {},
): Promise<{ applied: string[] }> {
  const log = opts.log ?? (() => undefined);
  const migrations = readMigrations(opts.migrationsDir);
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // Session-level lock held for the whole run: concurrent runners (several
    // replicas starting at once) wait here and then find everything applied.
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_ADVISORY_LOCK_KEY]);
    try {
      return await applyPending(client, migrations, log);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_ADVISORY_LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}

async function applyPending(
  client: Client,
  migrations: MigrationFile[],
  log: (msg: string) => void,
): Promise<{ applied: string[] }> {
  await client.query(CREATE_MIGRATIONS_TABLE);
  const { rows } = await client.query<AppliedRow>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
  );

  // Like Prisma (P3009): a migration that started and neither finished nor was
  // marked rolled back blocks every later one until someone resolves it.
  const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed) {
    throw new MigrationError(
      failed.migration_name,
      `migration ${failed.migration_name} failed earlier and is not resolved; new migrations will not be applied. ` +
        `Fix the database, then mark it with \`prisma migrate resolve --applied|--rolled-back ${failed.migration_name}\``,
    );
  }

  const finished = new Map(rows.filter((r) => r.finished_at !== null).map((r) => [r.migration_name, r]));
  const applied: string[] = [];
  for (const m of migrations) {
    const done = finished.get(m.name);
    if (done) {
      if (done.checksum !== m.checksum) {
        throw new MigrationError(
          m.name,
          `migration ${m.name} was modified after it was applied (checksum ${done.checksum} in the database, ` +
            `${m.checksum} on disk); restore the original file and add a new migration instead`,
        );
      }
      continue;
    }
    await applyOne(client, m);
    applied.push(m.name);
    log(`applied migration ${m.name}`);
  }
  return { applied };
}

// The SQL and its bookkeeping row commit together: a crash leaves neither.
async function applyOne(client: Client, m: MigrationFile): Promise<void> {
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<{ now: Date }>('SELECT clock_timestamp() AS now');
    await client.query(m.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations"
         (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
       VALUES ($1, $2, clock_timestamp(), $3, NULL, NULL, $4, 1)`,
      [randomUUID(), m.checksum, m.name, rows[0]?.now],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    const reason = err instanceof Error ? err.message : String(err);
    throw new MigrationError(m.name, `migration ${m.name} failed and was rolled back: ${reason}`);
  }
}
