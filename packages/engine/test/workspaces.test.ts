import { NotFoundError, putSecret, resolveTaskEnv } from '@sluice/engine';
import { getExecution } from '@sluice/store';
import { startEngine, WORKSPACE, type EngineHarness } from './harness';

// Workspaces in the engine (docs/decisions.md §12): executions, concurrency,
// snapshots, subflows and secrets are keyed by workspace and namespace.

const OTHER = 'ws-other';
const command = (marker: string, extra: string[] = []) =>
  [...extra, 'tasks:', '  - id: a', '    type: command', `    command: ["echo", "${marker}"]`, ''].join('\n');

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngine();
});
afterAll(() => h.close());

describe('workspaces in the engine', () => {
  it('runs same-name flows of two workspaces as two flows: own definition, snapshot and concurrency', async () => {
    await h.storeFlow('solo', command('mine', ['concurrency: 1']));
    await h.storeFlow('solo', command('theirs', ['concurrency: 1']), 'ns', OTHER);
    await h.pool.query(
      `INSERT INTO namespace_files (workspace, namespace, path, content, sha256)
       VALUES ($1, 'ns', 'data.csv', 'theirs', 'x')`,
      [OTHER],
    );
    const mine = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'solo' });
    const theirs = await h.engine.createExecution({ workspace: OTHER, namespace: 'ns', flowId: 'solo' });
    // concurrency: 1 counts the flow's executions in its own workspace only.
    expect(mine).toMatchObject({ workspace: WORKSPACE, state: 'RUNNING' });
    expect(theirs).toMatchObject({ workspace: OTHER, state: 'RUNNING' });
    expect(JSON.stringify(mine.definition)).toContain('mine');
    expect(JSON.stringify(theirs.definition)).toContain('theirs');
    expect(mine.snapshotId).not.toBe(theirs.snapshotId);
    await expect(
      h.engine.createExecution({ workspace: OTHER, namespace: 'ns', flowId: 'nowhere' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await h.engine.cancelExecution(mine.id);
    await h.engine.cancelExecution(theirs.id);
  });

  it('a subflow task starts only a flow of its own workspace, whatever namespace it names', async () => {
    const subflow = (flow: string) =>
      ['tasks:', '  - id: sub', '    type: subflow', `    flow: ${flow}`, '    wait: false', ''].join('\n');
    await h.storeFlow('parent', subflow('etl/child'));
    await h.storeFlow('child', command('theirs'), 'etl', OTHER);
    const parent = await h.engine.createExecution({
      workspace: WORKSPACE,
      namespace: 'ns',
      flowId: 'parent',
    });
    const [run] = (await h.claimAll(['inline'])).filter((r) => r.executionId === parent.id);
    const req = { taskRunId: run!.id, fence: run!.fence, flow: 'etl/child', wait: false };
    await expect(h.engine.startSubflow(req)).rejects.toBeInstanceOf(NotFoundError);
    const children = await h.pool.query('SELECT id FROM executions WHERE parent_task_run_id = $1', [run!.id]);
    expect(children.rows).toEqual([]);

    await h.storeFlow('child', command('mine'), 'etl');
    const { executionId } = await h.engine.startSubflow(req);
    const child = await getExecution(h.pool, executionId);
    expect(child).toMatchObject({ workspace: WORKSPACE, namespace: 'etl', flowId: 'child' });
    expect(JSON.stringify(child?.definition)).toContain('mine');
  });

  it("resolves a secret reference in the task's own workspace only; a sealed value moved to another does not open", async () => {
    const keyring = h.engine.deps.keyring!;
    const env = { TOKEN: { secret: 'api-token' } };
    await putSecret(h.pool, keyring, { workspace: WORKSPACE, namespace: 'ns' }, 'api-token', 'value-of-mine');
    expect(await resolveTaskEnv(h.pool, keyring, { workspace: WORKSPACE, namespace: 'ns' }, env)).toEqual({
      TOKEN: 'value-of-mine',
    });
    const other = { workspace: OTHER, namespace: 'ns' };
    await expect(resolveTaskEnv(h.pool, keyring, other, env)).rejects.toThrow(
      'env TOKEN: secret "api-token" is not set in namespace ns',
    );
    // Someone with write access to the table copies the sealed row into the other workspace.
    await h.pool.query(
      `INSERT INTO secrets (workspace, namespace, name, key_id, iv, tag, ciphertext)
       SELECT $2, namespace, name, key_id, iv, tag, ciphertext FROM secrets WHERE workspace = $1`,
      [WORKSPACE, OTHER],
    );
    const moved = resolveTaskEnv(h.pool, keyring, other, env);
    await expect(moved).rejects.toThrow(/failed authentication/);
    await expect(moved).rejects.not.toThrow(/value-of-mine/);
  });
});
