import { request } from 'node:http';
import { dockerEndpoint } from '@sluice/executors';

export { dockerEndpoint };

/**
 * GET /_ping on the Docker API. True only for a 200 within `timeoutMs`; a
 * missing socket, a refusal or a slow daemon all count as "no Docker".
 */
export function pingDocker(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { ...dockerEndpoint(env), path: '/_ping', method: 'GET', timeout: timeoutMs },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy(new Error('docker ping timed out')));
    req.on('error', () => resolve(false));
    req.end();
  });
}
