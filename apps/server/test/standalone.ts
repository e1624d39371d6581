import { createUserToken } from '@sluice/auth';
import { JWT_SECRET, type ServerProcess } from '@sluice/testing';

export { apiClient, ended, JWT_SECRET, MASTER_KEY, startStandalone } from '@sluice/testing';
export type { ExecutionView, TaskRunView } from '@sluice/testing';

/** `sluice server --standalone` as a real child process (see startStandalone in @sluice/testing). */
export type StandaloneServer = ServerProcess;

/** An admin token that the servers of startStandalone accept. */
export async function adminToken(): Promise<string> {
  return createUserToken(JWT_SECRET, { user: 'e2e', workspace: 'w', role: 'admin' });
}
