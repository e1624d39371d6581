import { Client } from 'pg';

/**
 * Creates database `name` on the server that `adminUrl` reaches, unless it
 * exists. For the embedded PostgreSQL's first start; `name` is a fixed
 * identifier of ours, never user input (CREATE DATABASE takes no parameters).
 */
export async function ensureDatabaseExists(adminUrl: string, name: 'sluice'): Promise<void> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
}
