import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, userApi, type TestDatabase } from '@sluice/testing';
import { adminToken, apiClient, ended, startStandalone, type StandaloneServer } from './standalone';

const SLUICE = join(__dirname, '..', '..', '..', 'bin', 'sluice.cjs');

/** Process tasks change user only on a root server (docs/decisions.md §13); elsewhere they share its user. */
const asRoot = process.getuid?.() === 0 ? describe : describe.skip;

asRoot('a root standalone server runs process tasks as nobody', () => {
  let db: TestDatabase;
  let parent: string;
  let dataDir: string;
  let server: StandaloneServer;
  let api: ReturnType<typeof apiClient>;
  let hook: Server;
  let hookPort = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    hook = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
    hookPort = (hook.address() as { port: number }).port;
    parent = mkdtempSync(join(tmpdir(), 'sluice-task-user-e2e-'));
    chmodSync(parent, 0o755);
    dataDir = join(parent, 'data');
    // No master key configured: the server generates its secrets.json under SLUICE_DATA_DIR, as on the quick start.
    server = await startStandalone(db.url, { SLUICE_MASTER_KEYS: '', SLUICE_DATA_DIR: dataDir });
    api = apiClient(server.publicUrl, await adminToken());
  });
  afterAll(async () => {
    await server?.stop();
    await new Promise((r) => hook?.close(r));
    await db?.drop();
    if (parent) rmSync(parent, { recursive: true, force: true });
  });

  /** Runs a one-flow execution to its end and answers its task runs with their logs. */
  async function runFlow(namespace: string, flowId: string, yaml: string) {
    const put = await api.putFlow(namespace, flowId, yaml);
    expect(put).toMatchObject({ status: 200 });
    const execution = await api.waitFor(await api.run(namespace, flowId), ended);
    return Promise.all(execution.taskRuns.map(async (run) => ({ run, lines: await api.logs(run.id) }))).then(
      (runs) => ({ execution, runs }),
    );
  }

  const probe = (id: string) => `
  - id: ${id}
    type: command
    command:
      - sh
      - -c
      - |
        echo "uid=$(id -u)" >> "$SLUICE_OUTPUTS"
        echo "groups=$(id -G)"
        cat "${dataDir}/secrets.json" || echo "secrets.json refused"
        ls "${dataDir}" || echo "data dir listing refused"
        cat /proc/${server.proc.pid}/environ || echo "server environ refused"
        echo written > "$SLUICE_WORK_DIR/probe" && echo "work dir $(cat "$SLUICE_WORK_DIR/probe")"
        echo written > "$HOME/probe" && echo "home $(cat "$HOME/probe")"`;

  it('keeps SLUICE_DATA_DIR, secrets.json and the server environment out of reach of two tasks at once, a standby runner among them', async () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
    const secrets = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;

    // Two tasks at once: the first claim takes the standby runner, the second what is ready then.
    const { execution, runs } = await runFlow('demo', 'probe', `tasks:${probe('a')}${probe('b')}\n`);
    expect(execution.state).toBe('SUCCEEDED');
    expect(runs).toHaveLength(2);
    for (const { run, lines } of runs) {
      expect(run.outputs).toEqual({ uid: '65534' });
      const stdout = lines.filter((l) => l.stream === 'stdout').map((l) => l.line);
      const stderr = lines
        .filter((l) => l.stream === 'stderr')
        .map((l) => l.line)
        .join('\n');
      expect(stdout).toEqual([
        'groups=65534',
        'secrets.json refused',
        'data dir listing refused',
        'server environ refused',
        'work dir written',
        'home written',
      ]);
      expect(stderr).toContain(`${join(dataDir, 'secrets.json')}: Permission denied`);
      expect(stderr).toContain(`/proc/${server.proc.pid}/environ: Permission denied`);
      const all = lines.map((l) => l.line).join('\n');
      for (const value of Object.values(secrets)) expect(all).not.toContain(value);
    }
    expect(server.output()).toContain('process tasks run as nobody (SLUICE_PROCESS_TASK_USER)');
    // At least one task run went to a standby runner: standbys run as nobody too.
    expect(server.output()).toContain('task run handed to a standby runner');
  });

  it('keeps secrets.json unreadable with the data dir traversable (0711, as with the embedded PostgreSQL)', async () => {
    chmodSync(dataDir, 0o711);
    const { execution, runs } = await runFlow('demo', 'probe-711', `tasks:${probe('a')}\n`);
    expect(execution.state).toBe('SUCCEEDED');
    const stdout = runs[0]!.lines.filter((l) => l.stream === 'stdout').map((l) => l.line);
    expect(stdout.slice(1, 3)).toEqual(['secrets.json refused', 'data dir listing refused']);
  });

  it('refuses the process executor in a namespace whose namespace.yaml leaves it out, at PUT and at start', async () => {
    const processFlow = 'tasks:\n  - { id: a, type: command, command: ["true"] }\n';
    const inlineFlow = `tasks:\n  - id: hook\n    type: http\n    request: { method: GET, url: "http://127.0.0.1:${hookPort}/hook" }\n`;
    // Stored before the rule exists; refused at start once it does.
    expect(await api.putFlow('untrusted', 'older', processFlow)).toMatchObject({ status: 200 });

    const rule = 'allowed_executors: [docker, kubernetes]\n';
    const member = await userApi(server, 'member');
    const memberPut = await member.call(
      'PUT',
      '/api/v1/namespaces/untrusted/files/namespace.yaml',
      rule,
      'text/plain',
    );
    expect(memberPut).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    const put = await api.call(
      'PUT',
      '/api/v1/namespaces/untrusted/files/namespace.yaml',
      rule,
      'text/plain',
    );
    expect(put.status).toBe(200);
    // A member can no more lift the rule than set it.
    const lift = await member.call('DELETE', '/api/v1/namespaces/untrusted/files/namespace.yaml');
    expect(lift.status).toBe(403);

    const refused = await api.putFlow('untrusted', 'newer', processFlow);
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([
      expect.objectContaining({ code: 'executor_type_not_allowed', path: 'tasks[0].executor.type' }),
    ]);
    expect(JSON.stringify(refused.body)).toContain('namespace.yaml allowed_executors: docker, kubernetes');

    const start = await api.call('POST', '/api/v1/namespaces/untrusted/flows/older/executions');
    expect(start.status).toBe(422);
    expect(start.body).toMatchObject({ error: { code: 'executor_type_not_allowed' } });
    expect(String((start.body.error as { message: string }).message)).toContain('allowed_executors');

    // Inline tasks are unaffected.
    const inline = await runFlow('untrusted', 'hook', inlineFlow);
    expect(inline.execution.state).toBe('SUCCEEDED');
  });

  it('stops at start, naming the variable, when SLUICE_PROCESS_TASK_USER names no user', () => {
    const r = spawnSync(process.execPath, [SLUICE, 'server', '--standalone'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: '/tmp',
        SLUICE_DATABASE_URL: db.url,
        SLUICE_DATA_DIR: join(parent, 'other'),
        HTTP_SERVER_ADDR: '127.0.0.1:0',
        INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0',
        SLUICE_PROCESS_TASK_USER: 'no-such-user',
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('SLUICE_PROCESS_TASK_USER: no user "no-such-user" on this host');
  });
});
