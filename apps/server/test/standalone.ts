import { createUserToken } from '@sluice/auth';
import {
  apiClient,
  createTestDatabase,
  JWT_SECRET,
  startStandalone,
  type ServerProcess,
  type TestDatabase,
} from '@sluice/testing';

export { apiClient, ended, JWT_SECRET, MASTER_KEY, startStandalone } from '@sluice/testing';
export type { ExecutionView, TaskRunView } from '@sluice/testing';

/** `sluice server --standalone` as a real child process (see startStandalone in @sluice/testing). */
export type StandaloneServer = ServerProcess;

/** An admin token that the servers of startStandalone accept. */
export async function adminToken(): Promise<string> {
  return createUserToken(JWT_SECRET, { user: 'e2e', workspace: 'w', role: 'admin' });
}

export interface StandaloneFixture {
  readonly db: TestDatabase;
  readonly server: StandaloneServer;
  /** The public API as an admin of workspace `w`. */
  readonly api: ReturnType<typeof apiClient>;
}

/**
 * A standalone server on a test database of its own for the whole file
 * (jest hooks: started in beforeAll, stopped and dropped in afterAll).
 */
export function useStandaloneServer(env: Record<string, string> = {}): StandaloneFixture {
  let db: TestDatabase | undefined;
  let server: StandaloneServer | undefined;
  let api: ReturnType<typeof apiClient> | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startStandalone(db.url, env);
    api = apiClient(server.publicUrl, await adminToken());
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined)
      throw new Error('the standalone server is not started yet (use it inside a test)');
    return value;
  };
  return {
    get db() {
      return started(db);
    },
    get server() {
      return started(server);
    },
    get api() {
      return started(api);
    },
  };
}
