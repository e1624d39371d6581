import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { DEFAULT_MIGRATIONS_DIR, DEFAULT_WORKSPACE, migrate, readMigrations } from '@sluice/store';

const WORKSPACES_MIGRATION = '20261201000000_workspaces';

describe(`migration ${WORKSPACES_MIGRATION}`, () => {
  let db: TestDatabase;
  let dir: string;
  let c: Client;

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    // The migrations up to the one before workspaces: a database as it was before them.
    dir = mkdtempSync(path.join(tmpdir(), 'sluice-pre-workspaces-'));
    for (const m of readMigrations()) {
      if (m.name >= WORKSPACES_MIGRATION) break;
      cpSync(path.join(DEFAULT_MIGRATIONS_DIR, m.name), path.join(dir, m.name), { recursive: true });
    }
    await migrate(db.url, { migrationsDir: dir });
    c = new Client({ connectionString: db.url });
    await c.connect();
  });
  afterAll(async () => {
    await c.end();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`gives every existing namespace the workspace "${DEFAULT_WORKSPACE}", and a new workspace its own namespace of the same name`, async () => {
    await c.query(
      `INSERT INTO flows (namespace, flow_id, source, definition) VALUES ('etl', 'f', 'y', '{}')`,
    );
    await c.query(
      `INSERT INTO namespace_files (namespace, path, content, sha256) VALUES ('etl', 'a.txt', 'x', 'x')`,
    );
    await c.query(
      `INSERT INTO secrets (namespace, name, key_id, iv, tag, ciphertext) VALUES ('etl', 's', 'k', '', '', '')`,
    );
    await c.query(
      `INSERT INTO executions (id, namespace, flow_id, definition, state, scheduled_for)
       VALUES (gen_random_uuid(), 'etl', 'f', '{}', 'SUCCEEDED', '2026-01-01T00:00:00Z')`,
    );

    // Then that migration alone (later ones may follow it in the repository).
    cpSync(path.join(DEFAULT_MIGRATIONS_DIR, WORKSPACES_MIGRATION), path.join(dir, WORKSPACES_MIGRATION), {
      recursive: true,
    });
    expect((await migrate(db.url, { migrationsDir: dir })).applied).toEqual([WORKSPACES_MIGRATION]);

    for (const table of ['flows', 'namespace_files', 'secrets', 'executions']) {
      const { rows } = await c.query(`SELECT workspace, namespace FROM ${table}`);
      expect({ table, rows }).toEqual({ table, rows: [{ workspace: DEFAULT_WORKSPACE, namespace: 'etl' }] });
    }
    // No default is left: a writer that forgets the workspace fails instead of landing in "default".
    await expect(
      c.query(`INSERT INTO flows (namespace, flow_id, source, definition) VALUES ('etl', 'g', 'y', '{}')`),
    ).rejects.toThrow(/workspace/);
    // The same names in another workspace are other rows, including the scheduler's due-time key.
    await c.query(
      `INSERT INTO flows (workspace, namespace, flow_id, source, definition) VALUES ('b', 'etl', 'f', 'y', '{}')`,
    );
    await c.query(
      `INSERT INTO executions (id, workspace, namespace, flow_id, definition, state, scheduled_for)
       VALUES (gen_random_uuid(), 'b', 'etl', 'f', '{}', 'QUEUED', '2026-01-01T00:00:00Z')`,
    );
    const flows = await c.query(
      `SELECT workspace FROM flows WHERE namespace = 'etl' AND flow_id = 'f' ORDER BY 1`,
    );
    expect(flows.rows).toEqual([{ workspace: 'b' }, { workspace: DEFAULT_WORKSPACE }]);
    await expect(
      c.query(
        `INSERT INTO executions (id, workspace, namespace, flow_id, definition, state, scheduled_for)
         VALUES (gen_random_uuid(), 'b', 'etl', 'f', '{}', 'QUEUED', '2026-01-01T00:00:00Z')`,
      ),
    ).rejects.toThrow(/executions_workspace_namespace_flow_id_scheduled_for_key/);
  });
});
