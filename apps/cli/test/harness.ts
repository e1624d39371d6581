import { createUserToken } from '@sluice/auth';
import {
  createTestDatabase,
  JWT_SECRET,
  startStandalone,
  type ServerProcess,
  type TestDatabase,
} from '@sluice/testing';
import { freshHome } from './binary';

export interface CliFixture {
  server: ServerProcess;
  /** An admin token of workspace `w`. */
  token: string;
  /** HOME and XDG_CONFIG_HOME of a user who has not logged in. */
  home: string;
  /** The environment a user of this server runs the CLI with: SLUICE_URL and SLUICE_TOKEN set. */
  env: Record<string, string>;
}

/** A standalone server on a test database of its own for the file, and a token for it. */
export function useServer(): () => CliFixture {
  let db: TestDatabase | undefined;
  let fixture: CliFixture | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    const server = await startStandalone(db.url);
    const token = await createUserToken(JWT_SECRET, { user: 'cli', workspace: 'w', role: 'admin' });
    const home = freshHome();
    fixture = {
      server,
      token,
      home,
      env: { HOME: home, SLUICE_URL: server.publicUrl, SLUICE_TOKEN: token },
    };
  });
  afterAll(async () => {
    await fixture?.server.stop();
    await db?.drop();
  });
  return () => {
    if (!fixture) throw new Error('the server is not started yet (use it inside a test)');
    return fixture;
  };
}
