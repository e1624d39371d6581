import { Pool } from 'pg';
import type { InstanceRegistration } from '@sluice/protocol';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { createPool, listInstances, registerInstance, servedPools, touchInstance } from '@sluice/claim-store';

const registration = (over: Partial<InstanceRegistration> = {}): InstanceRegistration => ({
  instanceId: 'docker-1',
  type: 'docker-executor',
  version: '0.1.0',
  capacity: { docker: 5, inline: 64 },
  pools: ['default', 'gpu'],
  executors: ['docker', 'inline'],
  resourceDefaults: { memory: '512Mi' },
  ...over,
});

describe('instances', () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createPool(db.url);
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });
  beforeEach(() => pool.query('DELETE FROM instances'));

  it('registers an instance and replaces its registration on the next one', async () => {
    const first = await registerInstance(pool, registration());
    expect(first).toMatchObject({
      id: 'docker-1',
      type: 'docker-executor',
      capacity: { docker: 5, inline: 64 },
      pools: ['default', 'gpu'],
      executors: ['docker', 'inline'],
      resourceDefaults: { memory: '512Mi' },
    });
    const again = await registerInstance(pool, registration({ pools: ['default'], version: '0.2.0' }));
    expect(again).toMatchObject({ pools: ['default'], version: '0.2.0' });
    expect(again.registeredAt).toEqual(first.registeredAt);
    expect(await listInstances(pool)).toHaveLength(1);
  });

  it('lists only instances seen recently, and says which pools they serve', async () => {
    await registerInstance(pool, registration());
    await registerInstance(
      pool,
      registration({
        instanceId: 'k8s-1',
        type: 'k8s-executor',
        pools: ['batch'],
        executors: ['kubernetes', 'inline'],
      }),
    );
    await registerInstance(
      pool,
      registration({ instanceId: 'old', pools: ['legacy'], executors: ['process'] }),
    );
    await pool.query(`UPDATE instances SET last_seen_at = now() - interval '10 minutes' WHERE id = 'old'`);

    expect((await listInstances(pool, { seenWithinMs: 60_000 })).map((i) => i.id)).toEqual([
      'docker-1',
      'k8s-1',
    ]);
    expect((await listInstances(pool)).map((i) => i.id)).toEqual(['docker-1', 'k8s-1', 'old']);
    expect(await servedPools(pool, 60_000)).toEqual([
      { executorType: 'docker', pool: 'default' },
      { executorType: 'docker', pool: 'gpu' },
      { executorType: 'inline', pool: '' },
      { executorType: 'kubernetes', pool: 'batch' },
    ]);

    expect(await touchInstance(pool, 'old')).toBe(true);
    expect(await touchInstance(pool, 'never-registered')).toBe(false);
    expect(await servedPools(pool, 60_000)).toContainEqual({ executorType: 'process', pool: 'legacy' });
  });
});
