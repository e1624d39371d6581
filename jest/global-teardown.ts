import type { TestPostgres } from '../packages/testing/src';

export default async function globalTeardown(): Promise<void> {
  const pg = (globalThis as Record<string, unknown>).__SLUICE_PG__ as TestPostgres | undefined;
  await pg?.stop();
}
