import {
  createTestDatabase,
  explained,
  sleep,
  startExecutor,
  startServer,
  userApi,
  type AppProcess,
  type ServerProcess,
  type TestDatabase,
} from '@sluice/testing';

let db: TestDatabase;
let server: ServerProcess;
const executors: AppProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startServer(db.url);
  executors.push(await startExecutor(server, 'default-host'));
});

afterAll(async () => {
  await Promise.all(executors.map((e) => e.stop()));
  await server?.stop();
  await db?.drop();
});

const GPU_FLOW = `
tasks:
  - id: train
    type: command
    command: ["sh", "-c", "echo trained"]
    executor: { type: process, pool: gpu }
`;

describe('pools', () => {
  it('keeps a gpu task queued as no_instance_for_pool until a gpu instance registers, which then runs it', async () => {
    const api = await userApi(server, 'admin');
    expect((await api.putFlow('ml', 'train', GPU_FLOW)).status).toBe(200);
    const id = await api.run('ml', 'train');

    // Only the default-pool instance is online: it must leave the task alone, however long we look.
    for (let i = 0; i < 10; i++) {
      const waiting = await api.execution(id);
      expect(waiting.taskRuns).toHaveLength(1);
      expect(waiting.taskRuns[0]).toMatchObject({ state: 'QUEUED', reason: 'no_instance_for_pool' });
      await sleep(150);
    }

    const gpu = await startExecutor(server, 'gpu-host', { SLUICE_POOLS: 'gpu' });
    executors.push(gpu);
    const done = await explained({ server, gpu }, () =>
      api.waitFor(id, (e) => e.taskRuns.every((r) => ['SUCCEEDED', 'FAILED'].includes(r.state)), 30_000),
    );
    expect(done.taskRuns).toHaveLength(1);
    expect(done.taskRuns[0]).toMatchObject({
      state: 'SUCCEEDED',
      ownerId: 'gpu-host',
      executor: { type: 'process', pool: 'gpu' },
    });
    expect(executors[0]!.output()).not.toContain(done.taskRuns[0]!.id);
  });
});
