import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { createPrismaClient, type PrismaClient } from '@sluice/store';

describe('createPrismaClient', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.url);
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it('reads and writes the migrated tables through the pg adapter', async () => {
    await prisma.flow.create({
      data: {
        workspace: 'w',
        namespace: 'team',
        flowId: 'hello',
        source: 'tasks: []',
        definition: { tasks: [] },
      },
    });
    const flow = await prisma.flow.findUnique({
      where: { workspace_namespace_flowId: { workspace: 'w', namespace: 'team', flowId: 'hello' } },
    });
    expect(flow).toMatchObject({
      namespace: 'team',
      flowId: 'hello',
      definition: { tasks: [] },
      schedule: null,
    });
    expect(flow?.createdAt).toBeInstanceOf(Date);
  });
});
