import { putSecret } from '@sluice/engine';
import { connectorTaskPart } from '../src/connector-spec';
import { startEngine, WORKSPACE, type EngineHarness } from './harness';

/* The runner's part of a connector task: config secret references resolved in the execution's namespace. */
let h: EngineHarness;
const ns = { workspace: WORKSPACE, namespace: 'ns' };

beforeAll(async () => {
  h = await startEngine();
  await putSecret(h.pool, h.engine.deps.keyring!, ns, 'db-password', 'pw-1');
  await putSecret(h.pool, h.engine.deps.keyring!, ns, 'api-key', 'key-2');
});
afterAll(async () => {
  await h?.close();
});

test('every { secret } reference in the config, at any depth, is replaced by its value and listed', async () => {
  const config = {
    host: 'db',
    auth: { password: { secret: 'db-password' } },
    keys: ['plain', { secret: 'api-key' }, { nested: [{ secret: 'db-password' }] }],
    // Not a reference: a `secret` key beside others, or one that is not a string.
    oauth: { secret: 'literal', client_id: 'c' },
    flag: { secret: 7 },
  };
  const stored = { operation: 'check', connector: { command: ['node', 'c.cjs'] }, config };
  const { part, secretValues } = await connectorTaskPart(h.pool, h.engine.deps.keyring!, ns, stored);
  expect(part).toEqual({
    type: 'connector',
    operation: 'check',
    command: ['node', 'c.cjs'],
    config: {
      host: 'db',
      auth: { password: 'pw-1' },
      keys: ['plain', 'key-2', { nested: ['pw-1'] }],
      oauth: { secret: 'literal', client_id: 'c' },
      flag: { secret: 7 },
    },
  });
  expect(secretValues.sort()).toEqual(['key-2', 'pw-1', 'pw-1']);
  // The stored task keeps its references.
  expect(config.auth.password).toEqual({ secret: 'db-password' });
});

test("a reference resolves only in the execution's own namespace, and a missing one names its place", async () => {
  const stored = {
    operation: 'discover',
    connector: { image: 'x/y:1' },
    config: { a: [{ b: { secret: 'db-password' } }] },
  };
  await expect(
    connectorTaskPart(h.pool, h.engine.deps.keyring!, { ...ns, namespace: 'other' }, stored),
  ).rejects.toThrow('config.a[0].b: secret "db-password" is not set in namespace other');
});
