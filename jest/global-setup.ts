// One PostgreSQL for the whole run and a migrated template database that
// every test file clones (CREATE DATABASE ... TEMPLATE).
import { startTestPostgres, withAdmin, ENV_ADMIN_URL, ENV_TEMPLATE, databaseUrl } from '../packages/testing/src';
import { migrate } from '../packages/claim-store/src/migrate';

const TEMPLATE = 'sluice_template';

export default async function globalSetup(): Promise<void> {
  const pg = await startTestPostgres();
  (globalThis as Record<string, unknown>).__SLUICE_PG__ = pg;
  await withAdmin(pg.adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${TEMPLATE} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${TEMPLATE}`);
  });
  await migrate(databaseUrl(pg.adminUrl, TEMPLATE));
  process.env[ENV_ADMIN_URL] = pg.adminUrl;
  process.env[ENV_TEMPLATE] = TEMPLATE;
}
