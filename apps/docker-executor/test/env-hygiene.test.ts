import { explained, logLines, startExecutor, userApi, useTopology } from '@sluice/testing';

/** Control-plane variables an env file shared with the server could hand an executor. */
const CONTROL_PLANE: Record<string, string> = {
  DB_DSN: 'postgres://sluice:db-password-3c1f@db/sluice',
  SLUICE_DATABASE_URL: 'postgres://sluice:db-password-3c1f@db/sluice',
  AUTH_JWT_SECRET: 'jwt-secret-8b0e7d2a41c94f6e9a3b5c7d1e2f4a6b',
  SECRET_ENCRYPTION_KEY: 'encryption-key-5d9a',
  SLUICE_MASTER_KEYS: 'master-key-list-77e1',
  PIPELINE_EXECUTOR_API_TOKEN: 'server-side-token-e4b2',
  WATERMILL_FOO: 'watermill-value-0a6c',
};

const topology = useTopology({
  startExecutor: (server) => startExecutor(server, 'env-host', CONTROL_PLANE),
});

describe('an executor started with the control plane variables', () => {
  it('logs exactly one warning per dropped variable, naming it and not its value', () => {
    const { executor } = topology;
    const warnings = logLines(executor.output()).filter(
      (line) => line.level === 'warn' && 'variable' in line,
    );
    expect(warnings.map((w) => w.variable).sort()).toEqual(Object.keys(CONTROL_PLANE).sort());
    for (const value of Object.values(CONTROL_PLANE)) expect(executor.output()).not.toContain(value);
  });

  it("keeps them out of a task's environment", async () => {
    const { server, executor } = topology;
    const api = await userApi(server, 'admin');
    const put = await api.putFlow(
      'hygiene',
      'show-env',
      'tasks:\n  - id: env\n    type: command\n    command: ["env"]\n',
    );
    expect(put.status).toBe(200);
    const id = await api.run('hygiene', 'show-env');
    const done = await explained({ server, executor }, () =>
      api.waitFor(id, (e) => e.taskRuns.some((r) => r.state === 'SUCCEEDED' || r.state === 'FAILED'), 30_000),
    );
    const run = done.taskRuns[0]!;
    expect(run).toMatchObject({ state: 'SUCCEEDED', ownerId: 'env-host' });
    const lines = (await api.logs(run.id)).map((l) => l.line);
    expect(lines.some((line) => line.startsWith('PATH='))).toBe(true); // the task really printed its environment
    for (const [name, value] of Object.entries(CONTROL_PLANE)) {
      expect(lines.filter((line) => line.startsWith(`${name}=`))).toEqual([]);
      expect(lines.join('\n')).not.toContain(value);
    }
  });
});
