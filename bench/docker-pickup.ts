// Claim → command start through the docker executor, next to `docker run` of
// the same image (create + start + wait of `true`), side by side in one run.
// Starts the built `sluice server --standalone` with the docker executor
// (host network, runner injected from the test runner image) and needs a
// Docker engine: `eval "$(bash scripts/docker-engine.sh)"`, then
// `pnpm bench docker-pickup` (after `pnpm build`).
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createUserToken } from '@sluice/auth';
import { migrate } from '@sluice/store';
import {
  apiClient,
  baseEnv,
  databaseUrl,
  ensureBusyboxStaticImage,
  ensureRunnerImage,
  freePort,
  requireDocker,
  startApp,
  startTestPostgres,
  withAdmin,
} from '@sluice/testing';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const root = path.resolve(__dirname, '..');
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;

export async function main(): Promise<void> {
  const docker = await requireDocker();
  const busybox = await ensureBusyboxStaticImage(docker);
  const runnerImage = await ensureRunnerImage(docker);
  const pg = await startTestPostgres();
  let server: Awaited<ReturnType<typeof startApp>> | undefined;
  try {
    await withAdmin(pg.adminUrl, (c) => c.query('CREATE DATABASE bench_docker'));
    const url = databaseUrl(pg.adminUrl, 'bench_docker');
    await migrate(url);
    const jwtSecret = randomBytes(32).toString('hex');
    const [httpPort, internalPort] = [await freePort(), await freePort()];
    server = await startApp({
      main: path.join(root, 'apps/server/dist/main.js'),
      args: ['server', '--standalone'],
      env: {
        ...baseEnv(),
        SLUICE_DATABASE_URL: url,
        AUTH_JWT_SECRET: jwtSecret,
        SLUICE_MASTER_KEYS: randomBytes(32).toString('base64'),
        HTTP_SERVER_ADDR: `127.0.0.1:${httpPort}`,
        INTERNAL_HTTP_SERVER_ADDR: `127.0.0.1:${internalPort}`,
        DOCKER_HOST: process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock',
        DOCKER_EXECUTOR_OWNER_ID: 'bench-docker',
        DOCKER_EXECUTOR_NETWORK: 'host',
        SLUICE_RUNNER_IMAGE: runnerImage,
        SLUICE_EXECUTORS: 'docker',
      },
      readyWhen: '"server started"',
    });
    const api = apiClient(
      `http://127.0.0.1:${httpPort}`,
      await createUserToken(jwtSecret, { user: 'b', workspace: 'b', role: 'admin' }),
    );
    const put = await api.putFlow(
      'bench',
      'box',
      `tasks:\n  - id: box\n    type: command\n    command: ["true"]\n    executor: { type: docker, image: ${busybox}, pull: never }\n`,
    );
    if (put.status !== 200) throw new Error(`flow: ${JSON.stringify(put.body)}`);
    const pgClient = new Client({ connectionString: url });
    await pgClient.connect();
    const sluice: number[] = [];
    const plain: number[] = [];
    try {
      for (let i = 0; i < ROUNDS; i += 1) {
        const id = await api.run('bench', 'box');
        for (;;) {
          const r = await pgClient.query<{ ms: number | null }>(
            `SELECT EXTRACT(EPOCH FROM (started_at - claimed_at)) * 1000 AS ms FROM task_runs WHERE execution_id = $1`,
            [id],
          );
          if (r.rows[0]?.ms != null) {
            sluice.push(Number(r.rows[0].ms));
            break;
          }
          await new Promise((r2) => setTimeout(r2, 10));
        }
        // The same image started by hand: create, start, wait for `true` to exit, remove.
        const t0 = process.hrtime.bigint();
        const c = await docker.createContainer({
          Image: busybox,
          Cmd: ['true'],
          HostConfig: { NetworkMode: 'host' },
        });
        await c.start();
        await c.wait();
        plain.push(Number(process.hrtime.bigint() - t0) / 1e6);
        await c.remove({ force: true });
      }
    } finally {
      await pgClient.end();
    }
    const result = {
      sluiceClaimToCommandStartMs: { p50: Math.round(pct(sluice, 0.5)), p99: Math.round(pct(sluice, 0.99)) },
      dockerRunMs: { p50: Math.round(pct(plain, 0.5)), p99: Math.round(pct(plain, 0.99)) },
    };
    console.log('\n| measure | p50 ms | p99 ms |\n|---|---:|---:|');
    console.log(
      `| claim → command start, docker executor (runner injected) | ${result.sluiceClaimToCommandStartMs.p50} | ${result.sluiceClaimToCommandStartMs.p99} |`,
    );
    console.log(
      `| docker run of the same image (create+start+wait of true) | ${result.dockerRunMs.p50} | ${result.dockerRunMs.p99} |`,
    );
    const date = new Date().toISOString().slice(0, 10);
    const out = path.join(__dirname, 'results', `docker-pickup-${date}.json`);
    mkdirSync(path.dirname(out), { recursive: true });
    const machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version };
    writeFileSync(
      out,
      `${JSON.stringify({ bench: 'docker-pickup', date, rounds: ROUNDS, machine, result }, null, 2)}\n`,
    );
    console.log(`wrote ${path.relative(process.cwd(), out)}`);
  } finally {
    await server?.stop();
    await pg.stop();
  }
}
