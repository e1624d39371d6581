import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** Set by the jest global setup: where the server is and which template holds the migrated schema. */
export const ENV_ADMIN_URL = 'SLUICE_TEST_PG_ADMIN_URL';
export const ENV_TEMPLATE = 'SLUICE_TEST_PG_TEMPLATE';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function urlFor(adminUrl: string, db: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${db}`;
  return u.toString();
}

export async function withAdmin<T>(adminUrl: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database for one test file: cloned from the migrated template
 * (fast, isolated), or empty with `{ empty: true }` for migration tests.
 */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = process.env[ENV_ADMIN_URL];
  const template = process.env[ENV_TEMPLATE];
  if (!adminUrl || !template) {
    throw new Error(
      `${ENV_ADMIN_URL}/${ENV_TEMPLATE} are not set: run tests through the root jest config (pnpm test)`,
    );
  }
  const name = `t_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, (c) =>
    c.query(options.empty ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${template}`),
  );
  return {
    name,
    url: urlFor(adminUrl, name),
    drop: () =>
      withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

export { urlFor as databaseUrl };
