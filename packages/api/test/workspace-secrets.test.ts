import { gunzipSync } from 'node:zlib';
import request from 'supertest';
import { runnerPaths } from '@sluice/protocol';
import { getTaskRun } from '@sluice/store';
import { claimWithToken, startApiHarness, type ApiHarness } from './harness';
import { A, B, NS, caller, tokenOf, type Caller } from './workspaces';

// Secrets and workspaces (docs/decisions.md §12, docs/secrets.md): a flow
// resolves only secrets of its own workspace, and two workspaces' namespaces
// of the same name share nothing.

const VALUE_OF_A = 'value-only-in-workspace-a-7f3e';

let h: ApiHarness;
let a: Caller;
let b: Caller;
beforeAll(async () => {
  h = await startApiHarness({ defaultRetryBackoffMs: 0 });
  a = caller(h.publicApp, await tokenOf(A, 'admin'));
  b = caller(h.publicApp, await tokenOf(B, 'admin'));
});
afterAll(() => h.close());

const ns = (path: string) => `/api/v1/namespaces/${NS}${path}`;
const usesSecret = (name: string) =>
  [
    'tasks:',
    '  - id: a',
    '    type: command',
    '    command: ["true"]',
    `    env: { TOKEN: { secret: ${name} } }`,
    '',
  ].join('\n');

async function runAndClaim(who: Caller, flow: string) {
  const created = await who.post(ns(`/flows/${flow}/executions`));
  expect(created.status).toBe(201);
  const claimed = (await claimWithToken(h)).find((c) => c.row.executionId === created.body.id);
  if (!claimed) throw new Error(`the task run of ${flow} was not claimed`);
  const spec = await request(h.internalApp)
    .get(runnerPaths.spec(claimed.row.id))
    .set('Authorization', `Bearer ${claimed.token}`);
  return { executionId: String(created.body.id), run: claimed, spec };
}

describe('secrets of another workspace', () => {
  it("a flow of B naming a secret that only A has fails to resolve it, and A's value appears nowhere", async () => {
    expect((await a.putSecret(ns('/secrets/only-a'), VALUE_OF_A)).status).toBe(204);
    expect((await b.putYaml(ns('/flows/steal'), usesSecret('only-a'))).status).toBe(200);

    const { executionId, run, spec } = await runAndClaim(b, 'steal');
    expect(spec.status).toBe(422);
    expect(spec.body.error.message).toBe('env TOKEN: secret "only-a" is not set in namespace etl');
    const row = await getTaskRun(h.pool, run.row.id);
    expect(row).toMatchObject({ state: 'FAILED', reason: 'error' });
    expect(row?.error).toMatch(/secret "only-a" is not set in namespace etl/);

    await h.engine.processPendingEvents();
    const view = await b.get(`/api/v1/executions/${executionId}`);
    const logs = await b.get(`/api/v1/task-runs/${run.row.id}/logs`);
    const everything = [
      JSON.stringify(spec.body),
      JSON.stringify(view.body),
      JSON.stringify(logs.body),
      row?.error,
    ];
    expect(everything.join('\n')).not.toContain(VALUE_OF_A);
    expect(h.logs.join('\n')).not.toContain(VALUE_OF_A);
    const stored = await h.pool.query(
      `SELECT count(*)::int AS n FROM task_runs WHERE spec::text LIKE '%' || $1 || '%' OR error LIKE '%' || $1 || '%'`,
      [VALUE_OF_A],
    );
    expect(stored.rows[0].n).toBe(0);
  });

  it("same-name namespaces are independent: each execution gets its own workspace's secret value and files", async () => {
    for (const [who, marker] of [
      [a, 'of-a'],
      [b, 'of-b'],
    ] as const) {
      expect((await who.putSecret(ns('/secrets/token'), `secret-${marker}`)).status).toBe(204);
      expect((await who.putYaml(ns('/flows/uses'), usesSecret('token'))).status).toBe(200);
      expect(
        (
          await who
            .put(ns('/files/data.txt'))
            .set('Content-Type', 'application/octet-stream')
            .send(Buffer.from(`data-${marker}`))
        ).status,
      ).toBe(200);
    }
    for (const [who, marker] of [
      [a, 'of-a'],
      [b, 'of-b'],
    ] as const) {
      const { run, spec } = await runAndClaim(who, 'uses');
      expect(spec.status).toBe(200);
      expect(spec.body.env).toEqual({ TOKEN: `secret-${marker}` });
      const bundle = await request(h.internalApp)
        .get(runnerPaths.snapshot(run.row.id))
        .set('Authorization', `Bearer ${run.token}`)
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        });
      const tar = gunzipSync(bundle.body as Buffer).toString('latin1');
      expect(tar).toContain(`data-${marker}`);
      expect(tar).not.toContain(marker === 'of-a' ? 'data-of-b' : 'data-of-a');
    }
  });

  it('a member cannot write, delete or list secrets; an admin of B cannot touch those of A', async () => {
    const member = caller(h.publicApp, await tokenOf(A, 'member'));
    expect((await member.putSecret(ns('/secrets/m'), 'value-of-member')).status).toBe(403);
    expect((await member.delete(ns('/secrets/only-a'))).status).toBe(403);
    expect((await member.get(ns('/secrets'))).status).toBe(403);
    expect((await b.delete(ns('/secrets/only-a'))).status).toBe(404);
    expect((await b.get(ns('/secrets'))).body.secrets.map((s: { name: string }) => s.name)).not.toContain(
      'only-a',
    );
    const names = (await a.get(ns('/secrets'))).body.secrets.map((s: { name: string }) => s.name);
    expect(names).toContain('only-a');
  });
});
