import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { parseFlow } from '@sluice/flows';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';

const root = path.resolve(__dirname, '../../..');
const built = path.join(root, 'apps/jobs/dist/main.js');

interface JobsProcess {
  child: ChildProcess;
  internalUrl: Promise<string>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** `sluice jobs` as an operator starts it: a real process through bin/sluice.cjs, on the built app. */
function startJobs(databaseUrl: string): JobsProcess {
  const child = spawn(process.execPath, [path.join(root, 'bin/sluice.cjs'), 'jobs'], {
    env: {
      PATH: process.env.PATH,
      DB_DSN: databaseUrl,
      INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0',
      PIPELINE_JOB_SCHEDULER_INTERVAL: '200ms',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const internalUrl = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /"internal":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) =>
      reject(new Error(`sluice jobs exited ${code} before starting:\n${out}${err}`)),
    );
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, internalUrl, exit, output: () => `${out}${err}` };
}

describe('three sluice jobs replicas on one database', () => {
  let db: TestDatabase;
  let client: Client;
  const replicas: JobsProcess[] = [];

  beforeAll(async () => {
    if (!existsSync(built)) {
      throw new Error(
        `${path.relative(root, built)} is missing: run \`pnpm --filter @sluice/app-jobs... build\` first`,
      );
    }
    db = await createTestDatabase();
    client = new Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    for (const replica of replicas) if (replica.child.exitCode === null) replica.child.kill('SIGKILL');
    await client.end();
    await db.drop();
  });

  it('schedules a flow due every second exactly once per due time, and stop with exit 0 on SIGTERM', async () => {
    const yaml = 'schedule: "* * * * * *"\ntasks:\n  - id: tick\n    type: command\n    command: ["true"]\n';
    const parsed = parseFlow(yaml, { namespace: 'ns', flowId: 'tick' });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const saved = await client.query<{ updated_at: Date }>(
      `INSERT INTO flows (workspace, namespace, flow_id, source, definition, schedule)
       VALUES ('w', 'ns', 'tick', $1, $2, $3) RETURNING updated_at`,
      [yaml, JSON.stringify(parsed.flow), parsed.flow.schedule],
    );
    const savedAt = saved.rows[0]!.updated_at;

    replicas.push(startJobs(db.url), startJobs(db.url), startJobs(db.url));
    const urls = await Promise.all(replicas.map((r) => r.internalUrl));
    const ready = await fetch(`${urls[0]}/ready`);
    expect(ready.status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, 4000));
    for (const replica of replicas) replica.child.kill('SIGTERM');
    const exits = await Promise.all(replicas.map((r) => r.exit));
    expect(exits).toEqual(replicas.map(() => ({ code: 0, signal: null })));
    const stoppedAt = (await client.query<{ now: Date }>('SELECT now() AS now')).rows[0]!.now;

    const duplicates = await client.query(
      `SELECT scheduled_for FROM executions GROUP BY flow_id, scheduled_for HAVING count(*) > 1`,
    );
    expect(duplicates.rows).toEqual([]);
    const times = (
      await client.query<{ t: Date }>(
        `SELECT scheduled_for AS t FROM executions WHERE flow_id = 'tick' ORDER BY scheduled_for`,
      )
    ).rows.map((r) => r.t.getTime());
    // One per second from the first whole second after the flow was saved, with no gap...
    expect(times[0]).toBe(Math.floor(savedAt.getTime() / 1000) * 1000 + 1000);
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual(times.slice(1).map(() => 1000));
    // ...up to the last cycle before the stop (within a couple of scheduler intervals of it).
    expect(times.at(-1)!).toBeGreaterThan(stoppedAt.getTime() - 2000);
    expect(times.length).toBeGreaterThanOrEqual(4);
    for (const replica of replicas) expect(replica.output()).not.toContain('"level":"error"');
  });
});
