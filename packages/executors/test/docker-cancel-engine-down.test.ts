import Docker from 'dockerode';
import { DockerExecutor } from '@sluice/executors';

/**
 * Cancelling a task run this executor does not follow (an adopted container, by its ID) while
 * the Docker engine does not answer: the failed stop must not surface as an unhandled rejection,
 * which ends an executor process. The container keeps its owner label for the next cleanup.
 */
describe('docker executor cancel with the engine down', () => {
  it('returns, and leaves no unhandled rejection behind', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const executor = new DockerExecutor({
        docker: new Docker({ socketPath: '/nonexistent/docker.sock' }),
        ownerId: 'owner-engine-down',
        runnerImage: 'sluice-test/no-such-runner:1',
      });
      await executor.cancel({ taskRunId: 'tr-engine-down', fence: 1, externalRef: 'no-such-container' });
      // The stop fails a moment later (ENOENT on the socket); give it time to.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
