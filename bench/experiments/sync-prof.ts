import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SyncOrchestrator } from '../../packages/runner/src/sync/orchestrator';
import { ProcessEndpointStarter } from '../../packages/runner/src/sync/process-endpoint';
const EX = path.resolve(__dirname, '../../examples/connectors');
const S = [process.execPath, path.join(EX, 'source-sequence', 'main.cjs')] as [string, string];
const D = [process.execPath, path.join(EX, 'destination-null', 'main.cjs')] as [string, string];
export async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'p-'));
  const n = Number(process.env.N ?? 500000);
  const t0 = Date.now();
  const sync = new SyncOrchestrator({
    task: { type: 'sync', source: { command: S, config: { streams: ['users'], records_per_stream: n, record_size_bytes: Number(process.env.SIZE ?? 200), state_every: 10000 } }, destination: { command: D, config: {} },
      catalog: { streams: [{ stream: { name: 'users', json_schema: {}, supported_sync_modes: ['incremental'] }, sync_mode: 'incremental', destination_sync_mode: 'append' }] }, committedState: [] },
    commands: { source: S, destination: D },
    starter: new ProcessEndpointStarter({ filesDir: dir, cwd: dir, env: { PATH: process.env.PATH ?? '' }, logLineMaxBytes: 16384, maskCut: (t) => t }),
    commit: async () => {}, log: () => {}, mask: (t) => t, logLineMaxBytes: 16384, progress: () => {}, progressIntervalMs: 5000, stopGraceMs: 5000, onStarted: () => {},
  });
  const c0 = process.cpuUsage();
  const o = await sync.run();
  const cpu = process.cpuUsage(c0);
  console.log('runner cpu us/record', ((cpu.user + cpu.system) / n).toFixed(2), 'user', (cpu.user/n).toFixed(2), 'sys', (cpu.system/n).toFixed(2));
  const s = (Date.now() - t0) / 1000;
  console.log(JSON.stringify(o).slice(0, 200), Math.round(n / s), 'rec/s');
}
