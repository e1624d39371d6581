import type { InstanceRegistration } from '@sluice/protocol';
import { listInstances, registerInstance, servedPools } from '@sluice/store';
import { useStoreDatabase } from './fixtures';

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
  const store = useStoreDatabase();
  beforeEach(() => store.pool.query('DELETE FROM instances'));

  it('registers an instance and replaces its registration on the next one', async () => {
    const first = await registerInstance(store.pool, registration());
    expect(first).toMatchObject({
      id: 'docker-1',
      type: 'docker-executor',
      capacity: { docker: 5, inline: 64 },
      pools: ['default', 'gpu'],
      executors: ['docker', 'inline'],
      resourceDefaults: { memory: '512Mi' },
    });
    const again = await registerInstance(store.pool, registration({ pools: ['default'], version: '0.2.0' }));
    expect(again).toMatchObject({ pools: ['default'], version: '0.2.0' });
    expect(again.registeredAt).toEqual(first.registeredAt);
    expect(await listInstances(store.pool)).toHaveLength(1);
  });

  it('lists only instances seen recently, and says which pools they serve', async () => {
    await registerInstance(store.pool, registration());
    await registerInstance(
      store.pool,
      registration({
        instanceId: 'k8s-1',
        type: 'k8s-executor',
        pools: ['batch'],
        executors: ['kubernetes', 'inline'],
      }),
    );
    await registerInstance(
      store.pool,
      registration({ instanceId: 'old', pools: ['legacy'], executors: ['process'] }),
    );
    await store.pool.query(
      `UPDATE instances SET last_seen_at = now() - interval '10 minutes' WHERE id = 'old'`,
    );

    expect((await listInstances(store.pool, { seenWithinMs: 60_000 })).map((i) => i.id)).toEqual([
      'docker-1',
      'k8s-1',
    ]);
    expect((await listInstances(store.pool)).map((i) => i.id)).toEqual(['docker-1', 'k8s-1', 'old']);
    expect(await servedPools(store.pool, 60_000)).toEqual([
      { executorType: 'docker', pool: 'default' },
      { executorType: 'docker', pool: 'gpu' },
      { executorType: 'inline', pool: '' },
      { executorType: 'kubernetes', pool: 'batch' },
    ]);

    // Seen again (instances re-register periodically): it serves its pools again.
    await registerInstance(
      store.pool,
      registration({ instanceId: 'old', pools: ['legacy'], executors: ['process'] }),
    );
    expect(await servedPools(store.pool, 60_000)).toContainEqual({ executorType: 'process', pool: 'legacy' });
  });
});
