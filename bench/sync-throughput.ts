// Sync throughput (docs/connectors.md#sync): the example source's records
// (200 B and 2 KB) through the runner's sync orchestrator into the example
// destinations, next to the bare shell pipe `source read | destination write`
// of the same two commands in the same run: the orchestrator's cost is the
// ratio. With destination-postgres (a throwaway PostgreSQL) and with
// destination-null (the orchestrator alone). Commits go to a no-op instead of
// the runner API: what is measured is the runner's forwarding and state
// bookkeeping, not the server. Run with `pnpm bench sync-throughput`.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SyncTaskPart } from '@sluice/protocol';
import { databaseUrl, startTestPostgres, withAdmin } from '@sluice/testing';
import { SyncOrchestrator } from '../packages/runner/src/sync/orchestrator';
import { ProcessEndpointStarter } from '../packages/runner/src/sync/process-endpoint';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SMALL = Number(process.env.BENCH_SMALL_RECORDS ?? 500_000);
const LARGE = Number(process.env.BENCH_LARGE_RECORDS ?? 100_000);
const EXAMPLES = path.resolve(__dirname, '../examples/connectors');
const NODE = process.execPath;
const SOURCE = [NODE, path.join(EXAMPLES, 'source-sequence', 'main.cjs')] as [string, string];
const DESTINATIONS = {
  postgres: [NODE, path.join(EXAMPLES, 'destination-postgres', 'main.cjs')] as [string, string],
  null: [NODE, path.join(EXAMPLES, 'destination-null', 'main.cjs')] as [string, string],
};
type Destination = keyof typeof DESTINATIONS;

const catalog = {
  streams: [
    {
      stream: {
        name: 'users',
        json_schema: { type: 'object', properties: { id: { type: 'integer' } } },
        supported_sync_modes: ['full_refresh', 'incremental'],
        source_defined_cursor: true,
        default_cursor_field: ['id'],
        source_defined_primary_key: [['id']],
      },
      sync_mode: 'incremental',
      destination_sync_mode: 'append_dedup',
    },
  ],
};

let run = 0;

interface Case {
  size: number;
  records: number;
  destination: Destination;
  url: string;
}

function configs(c: Case) {
  run++;
  const source = {
    streams: ['users'],
    records_per_stream: c.records,
    record_size_bytes: c.size,
    state_every: 10_000,
  };
  // A table of its own per run, so every run writes into an empty one.
  const destination =
    c.destination === 'postgres'
      ? { url: c.url, schema: 'bench', table_prefix: `r${run}_`, batch_size: 1000 }
      : {};
  return { source, destination };
}

/** `source read | destination write > /dev/null` in sh. */
async function shellPipe(c: Case): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-sync-'));
  const { source, destination } = configs(c);
  const file = (name: string, body: unknown) => {
    const p = path.join(dir, name);
    writeFileSync(p, JSON.stringify(body));
    return p;
  };
  const [s, d, k] = [file('s.json', source), file('d.json', destination), file('k.json', catalog)];
  const q = (argv: string[]) => argv.map((a) => `'${a}'`).join(' ');
  const script = `${q(SOURCE)} read --config ${s} --catalog ${k} | ${q(DESTINATIONS[c.destination])} write --config ${d} --catalog ${k} > /dev/null`;
  const child = spawn('sh', ['-c', `set -e; ${script}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  const code = await new Promise((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`shell pipe exited with ${String(code)}`);
}

/** Runner CPU (user + system) per record of the orchestrator runs: the cost it adds, whatever the machine's load. */
const runnerCpu: Record<string, number[]> = {};

/** The same two commands through the sync orchestrator, as the runner runs them. */
async function orchestrator(c: Case): Promise<void> {
  const cpu0 = process.cpuUsage();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-sync-'));
  const { source, destination } = configs(c);
  const task: SyncTaskPart = {
    type: 'sync',
    source: { command: SOURCE, config: source },
    destination: { command: DESTINATIONS[c.destination], config: destination },
    catalog,
    committedState: [],
  };
  let committed = 0;
  const sync = new SyncOrchestrator({
    task,
    commands: { source: SOURCE, destination: DESTINATIONS[c.destination] },
    starter: new ProcessEndpointStarter({
      filesDir: dir,
      cwd: dir,
      env: { PATH: process.env.PATH ?? '' },
      logLineMaxBytes: 16_384,
      maskCut: (t) => t,
    }),
    commit: async (request) => {
      committed = request.sequence;
    },
    log: () => {},
    mask: (t) => t,
    logLineMaxBytes: 16_384,
    progress: () => {},
    progressIntervalMs: 5_000,
    stopGraceMs: 5_000,
    onStarted: () => {},
  });
  const outcome = await sync.run();
  if (!outcome.started || !outcome.ok) throw new Error(`sync failed: ${JSON.stringify(outcome)}`);
  if (outcome.outputs.records_committed !== String(c.records) || committed === 0)
    throw new Error(`sync committed ${outcome.outputs.records_committed} of ${c.records}`);
  const cpu = process.cpuUsage(cpu0);
  (runnerCpu[`${c.destination} ${c.size}`] ??= []).push((cpu.user + cpu.system) / c.records);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export async function main(): Promise<void> {
  const pg = await startTestPostgres();
  try {
    await withAdmin(pg.adminUrl, (c) => c.query('CREATE DATABASE bench_sync'));
    const url = databaseUrl(pg.adminUrl, 'bench_sync');
    const rows: Array<Record<string, string | number>> = [];
    for (const destination of ['null', 'postgres'] as const) {
      for (const size of [200, 2048]) {
        // PostgreSQL writes are some 5× slower: a fifth of the records keeps the run short.
        const records = Math.floor((size > 1000 ? LARGE : SMALL) / (destination === 'postgres' ? 5 : 1));
        const c: Case = { size, records, destination, url };
        const ways = { 'shell pipe': shellPipe, orchestrator };
        const samples: Record<string, number[]> = { 'shell pipe': [], orchestrator: [] };
        for (let round = 0; round < ROUNDS; round++) {
          const names = Object.keys(ways) as Array<keyof typeof ways>;
          if (round % 2 === 1) names.reverse();
          for (const name of names) {
            const t0 = process.hrtime.bigint();
            await ways[name](c);
            samples[name]!.push(Number(process.hrtime.bigint() - t0) / 1e9);
          }
        }
        const pipe = median(samples['shell pipe']!);
        for (const [name, s] of Object.entries(samples)) {
          const seconds = median(s);
          rows.push({
            destination,
            recordBytes: size,
            way: name,
            records,
            recordsPerSecond: Math.round(records / seconds),
            mbPerSecond: Math.round((records * (size + 1)) / seconds / 1e5) / 10,
            ofPipe: Math.round((pipe / seconds) * 100) / 100,
            runnerCpuUsPerRecord:
              name === 'orchestrator'
                ? Math.round(median(runnerCpu[`${destination} ${size}`] ?? []) * 100) / 100
                : '',
          });
          console.log(JSON.stringify(rows.at(-1)));
        }
      }
    }
    console.log('\n| destination | record | way | records/s | MB/s | × shell pipe | runner CPU µs/record |');
    console.log('|---|---:|---|---:|---:|---:|---:|');
    for (const r of rows) {
      console.log(
        `| ${r.destination} | ${r.recordBytes} B | ${r.way} | ${Number(r.recordsPerSecond).toLocaleString('en-US')} | ${r.mbPerSecond} | ${r.ofPipe} | ${r.runnerCpuUsPerRecord} |`,
      );
    }
    const date = new Date().toISOString().slice(0, 10);
    const out = path.join(__dirname, 'results', `sync-throughput-${date}.json`);
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ date, load: os.loadavg(), rows }, null, 2) + '\n');
    console.log(
      `load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(', ')}`,
    );
  } finally {
    await pg.stop();
  }
}
