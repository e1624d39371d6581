// One PostgreSQL for the whole run and a migrated template database that
// every test file clones (CREATE DATABASE ... TEMPLATE).
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  startTestPostgres,
  withAdmin,
  ENV_ADMIN_URL,
  ENV_TEMPLATE,
  databaseUrl,
} from '../packages/testing/src';
import { migrate } from '../packages/store/src/migrate';

const TEMPLATE = 'sluice_template';

// Tests load the claim store's Prisma client from src/generated (gitignored):
// generate it when it is missing or older than the schema.
function ensurePrismaClient(): void {
  const dir = path.join(__dirname, '../packages/store');
  const client = path.join(dir, 'src/generated/prisma/client.ts');
  const schema = path.join(dir, 'prisma/schema.prisma');
  if (existsSync(client) && statSync(client).mtimeMs >= statSync(schema).mtimeMs) return;
  execFileSync('pnpm', ['run', 'generate'], { cwd: dir, stdio: 'pipe' }); // on failure the error carries stderr
}

export default async function globalSetup(): Promise<void> {
  ensurePrismaClient();
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
