import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@sluice/testing';
import { sluice } from './binary';
import { useServer } from './harness';

// `sluice run`, `executions`, `logs` and `cancel` as users run them: the real
// binary against a standalone server on a real PostgreSQL (docs/cli.md).

const fixture = useServer();
const NS = 'cli-run';

const command = (id: string, script: string, dependsOn?: string) =>
  [
    `  - id: ${id}`,
    '    type: command',
    `    command: ["sh", "-c", ${JSON.stringify(script)}]`,
    ...(dependsOn ? [`    depends_on: [${dependsOn}]`] : []),
  ].join('\n');

const FLOWS: Record<string, string> = {
  two: ['tasks:', command('first', 'echo one; echo two'), command('second', 'echo three', 'first'), ''].join(
    '\n',
  ),
  failing: ['retry: { max_attempts: 1 }', 'tasks:', command('boom', 'echo about to fail; exit 3'), ''].join(
    '\n',
  ),
  slow: ['tasks:', command('wait', 'echo waiting; sleep 60'), ''].join('\n'),
  greet: [
    'inputs:',
    '  who: { type: string, required: true }',
    '  times: { type: number, default: 1 }',
    'tasks:',
    command('hello', 'echo hello {{ inputs.who }} x{{ inputs.times }}'),
    '',
  ].join('\n'),
};

beforeAll(async () => {
  const root = join(mkdtempSync(join(tmpdir(), 'sluice-run-')), NS);
  mkdirSync(join(root, 'flows'), { recursive: true });
  for (const [id, yaml] of Object.entries(FLOWS)) writeFileSync(join(root, 'flows', `${id}.yaml`), yaml);
  const applied = await sluice(['apply', root], fixture().env);
  expect(applied.stderr).toBe('');
  expect(applied.code).toBe(0);
});

describe('sluice run', () => {
  it('--follow prints the lines of a two-task flow in order and exits 0 when it succeeded', async () => {
    const run = await sluice(['run', `${NS}/two`, '--follow'], fixture().env);
    expect(run.stdout).toBe('one\ntwo\nthree\n');
    expect(run.stderr).toMatch(
      /--- first\n\[sluice\] task started[^]*--- second\n[^]*execution [0-9a-f-]{36} SUCCEEDED\n$/,
    );
    expect(run.code).toBe(0);
  });

  it('--follow exits 1 for a flow that fails, after printing its lines', async () => {
    const run = await sluice(['run', `${NS}/failing`, '--follow'], fixture().env);
    expect(run.stdout).toBe('about to fail\n');
    expect(run.stderr).toMatch(/execution [0-9a-f-]{36} FAILED/);
    expect(run.code).toBe(1);
  });

  it('--follow --output json: one object per log line, then the ended execution', async () => {
    const run = await sluice(['run', `${NS}/two`, '-f', '-o', 'json'], fixture().env);
    expect(run.code).toBe(0);
    const all = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    // Sluice's own lines (stream system: task started, ...) are in the JSON too.
    expect(all.some((o) => o.stream === 'system')).toBe(true);
    const objects = all.filter((o) => o.stream !== 'system');
    expect(objects.slice(0, 3).map((o) => [o.taskId, o.line])).toEqual([
      ['first', 'one'],
      ['first', 'two'],
      ['second', 'three'],
    ]);
    expect(all[all.length - 1]).toMatchObject({ namespace: NS, flowId: 'two', state: 'SUCCEEDED' });
  });

  it('--input name=value passes inputs, converted to their declared types; a bad one is the 422 in one line', async () => {
    const run = await sluice(
      ['run', `${NS}/greet`, '--follow', '--input', 'who=world', '--input', 'times=3'],
      fixture().env,
    );
    expect(run.stdout).toBe('hello world x3\n');
    expect(run.code).toBe(0);
    const executions = await sluice(
      ['executions', 'list', '--namespace', NS, '--flow', 'greet', '-o', 'json'],
      fixture().env,
    );
    const page = JSON.parse(executions.stdout) as { executions: { inputs: unknown }[] };
    expect(page.executions[0]?.inputs).toEqual({ who: 'world', times: 3 });

    const bad = await sluice(
      ['run', `${NS}/greet`, '--input', 'who=x', '--input', 'times=many'],
      fixture().env,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^sluice run: 422 .*inputs\.times.*\n$/);
    const missing = await sluice(['run', `${NS}/greet`], fixture().env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/inputs\.who/);
    const after = await sluice(
      ['executions', 'list', '--namespace', NS, '--flow', 'greet', '-o', 'json'],
      fixture().env,
    );
    expect((JSON.parse(after.stdout) as { executions: unknown[] }).executions).toHaveLength(1);
  });

  it('a missing flow is the server error in one line, exit 1', async () => {
    const run = await sluice(['run', `${NS}/nope`], fixture().env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^sluice run: 404 not_found: .+\n$/);
  });
});

describe('executions, logs, cancel', () => {
  let id: string;
  let taskRunId: string;

  beforeAll(async () => {
    const started = await sluice(['run', `${NS}/two`], fixture().env);
    expect(started.code).toBe(0);
    id = started.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const done = await eventually(
      'the execution to succeed',
      async () => {
        const got = await sluice(['executions', 'get', id, '--output', 'json'], fixture().env);
        const execution = JSON.parse(got.stdout);
        return execution.state === 'SUCCEEDED' && execution;
      },
      30_000,
      200,
    );
    taskRunId = done.taskRuns.find((r: { taskId: string }) => r.taskId === 'first').id;
  });

  it('executions list: a table by default, the API page with --output json, filters', async () => {
    const table = await sluice(['executions', 'list'], fixture().env);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+FLOW\s+STATE\s+TRIGGER\s+CREATED\s+DURATION$/);
    expect(table.stdout).toMatch(new RegExp(`^${id}\\s+${NS}/two\\s+SUCCEEDED\\s+api\\s`, 'm'));

    const json = await sluice(
      [
        'executions',
        'list',
        '--namespace',
        NS,
        '--flow',
        'failing',
        '--state',
        'failed',
        '--since',
        '1h',
        '-o',
        'json',
      ],
      fixture().env,
    );
    expect(json.code).toBe(0);
    const page = JSON.parse(json.stdout);
    expect(page.executions.length).toBeGreaterThan(0);
    expect(
      page.executions.every(
        (e: { flowId: string; state: string }) => e.flowId === 'failing' && e.state === 'FAILED',
      ),
    ).toBe(true);

    const one = await sluice(['executions', 'list', '--limit', '1', '-o', 'json'], fixture().env);
    const first = JSON.parse(one.stdout);
    expect(first.executions).toHaveLength(1);
    const next = await sluice(
      ['executions', 'list', '--limit', '1', '--cursor', first.nextCursor, '-o', 'json'],
      fixture().env,
    );
    expect(JSON.parse(next.stdout).executions[0].id).not.toBe(first.executions[0].id);

    const future = await sluice(['executions', 'list', '--since', '2999-01-01T00:00:00Z'], fixture().env);
    expect(future.stdout).toBe('no executions\n');
    const past = await sluice(['executions', 'list', '--until', '7d', '-o', 'json'], fixture().env);
    expect(JSON.parse(past.stdout).executions).toEqual([]);
    const bad = await sluice(['executions', 'list', '--until', 'yesterday'], fixture().env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^sluice executions: --until "yesterday" is neither/);
  });

  it('executions get: the execution and its task runs', async () => {
    const got = await sluice(['executions', 'get', id], fixture().env);
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(new RegExp(`^id:\\s+${id}$`, 'm'));
    expect(got.stdout).toMatch(/^state:\s+SUCCEEDED$/m);
    expect(got.stdout).toMatch(
      new RegExp(`^first\\s+1\\s+SUCCEEDED\\s+process/\\S+\\s+\\S+\\s+${taskRunId}$`, 'm'),
    );
    const missing = await sluice(
      ['executions', 'get', '00000000-0000-4000-8000-000000000000'],
      fixture().env,
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^sluice executions: 404 not_found: execution .* not found\n$/);
  });

  it('logs: the lines of a task run, -f alike once it ended, --output json as one object per line', async () => {
    const plain = await sluice(['logs', taskRunId], fixture().env);
    expect(plain).toMatchObject({ code: 0, stdout: 'one\ntwo\n' });
    const followed = await sluice(['logs', taskRunId, '-f'], fixture().env);
    expect(followed).toMatchObject({ code: 0, stdout: 'one\ntwo\n' });
    const json = await sluice(['logs', taskRunId, '--output', 'json'], fixture().env);
    const lines = json.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
    expect(lines.filter((l) => l.stream !== 'system').map((l) => [l.stream, l.line])).toEqual([
      ['stdout', 'one'],
      ['stdout', 'two'],
    ]);
    expect(plain.stderr).toMatch(/^\[sluice\] task started \(pid \d+\)$/m);
  });

  it('cancel: a running execution ends CANCELLED; -f of its task run ends with it', async () => {
    const started = await sluice(['run', `${NS}/slow`], fixture().env);
    const slowId = started.stdout.trim();
    const running = await eventually(
      'the task run to run',
      async () => {
        const got = await sluice(['executions', 'get', slowId, '-o', 'json'], fixture().env);
        const execution = JSON.parse(got.stdout);
        return execution.taskRuns[0]?.state === 'RUNNING' && execution;
      },
      30_000,
      200,
    );
    const following = sluice(['logs', running.taskRuns[0].id, '-f'], fixture().env);
    const cancelled = await sluice(['cancel', slowId, '--output', 'json'], fixture().env);
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ id: slowId, cancelRequested: true });
    const followedLogs = await following;
    expect(followedLogs).toMatchObject({ code: 0 });
    expect(followedLogs.stdout).toContain('waiting\n');
    await eventually(
      'the execution to end CANCELLED',
      async () =>
        /^state:\s+CANCELLED/m.test((await sluice(['executions', 'get', slowId], fixture().env)).stdout),
      30_000,
      200,
    );
    const plain = await sluice(['cancel', '00000000-0000-4000-8000-000000000000'], fixture().env);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/^sluice cancel: 404 not_found: /);
  });
});
