import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A stand-in for the runner in a docker sync's runner container: the real
 * FIFO endpoints of @sluice/runner (its bundle, dist/exec/runner.cjs) drive a
 * source and a destination and pipe one into the other, without the
 * orchestrator (no state commits). It waits for `work/go` in the volume when
 * the scenario says so (a test that needs the sync to last), and exits 0 when
 * both connectors did. Scenario in /harness/scenario.json.
 */
export const HARNESS_IMAGE = 'sluice-test/sync-harness:1';

const RUNNER_BUNDLE = join(__dirname, '..', '..', '..', 'packages', 'runner', 'dist', 'exec', 'runner.cjs');

export interface HarnessScenario {
  source: Record<string, unknown>;
  destination: Record<string, unknown>;
  catalog: unknown;
  /** Wait for `work/go` in the volume before starting the connectors. */
  waitForGo?: boolean;
}

const HARNESS = `
'use strict';
const fs = require('node:fs');
const { FifoEndpointStarter } = require('/harness/runner.cjs');
const scenario = JSON.parse(fs.readFileSync('/harness/scenario.json', 'utf8'));
const dir = process.env.SLUICE_SYNC_DIR;
(async () => {
  if (scenario.waitForGo) while (!fs.existsSync(dir + '/work/go')) await new Promise((r) => setTimeout(r, 100));
  const starter = new FifoEndpointStarter({ dir, logLineMaxBytes: 65536, maskCut: (s) => s });
  const launch = (role, operation, config) => starter.start({
    role, command: ['-'], operation,
    files: { config: JSON.stringify(config), catalog: JSON.stringify(scenario.catalog) },
    onStderrLine: (line) => console.error(role + ': ' + line),
  });
  const [source, destination] = await Promise.all([
    launch('source', 'read', scenario.source),
    launch('destination', 'write', scenario.destination),
  ]);
  source.stdout.pipe(destination.stdin);
  let states = 0;
  let rest = '';
  destination.stdout.on('data', (chunk) => {
    const lines = (rest + chunk).split('\\n');
    rest = lines.pop();
    for (const line of lines) if (line.includes('"STATE"')) states++;
  });
  const [s, d] = await Promise.all([source.exited, destination.exited]);
  console.log(JSON.stringify({ source: s, destination: d, states }));
  process.exit(s.code === 0 && d.code === 0 ? 0 : 3);
})().catch((err) => { console.error(err); process.exit(4); });
`;

/** Builds the harness image for one scenario on the node image `base`. */
export function buildHarnessImage(base: string, scenario: HarnessScenario): string {
  const context = mkdtempSync(join(tmpdir(), 'sync-harness-'));
  try {
    copyFileSync(RUNNER_BUNDLE, join(context, 'runner.cjs'));
    writeFileSync(join(context, 'harness.cjs'), HARNESS);
    writeFileSync(join(context, 'scenario.json'), JSON.stringify(scenario));
    // `sluice exec` on PATH (inject_runner: false) starts the harness.
    writeFileSync(join(context, 'sluice'), '#!/bin/sh\nexec node /harness/harness.cjs\n', { mode: 0o755 });
    writeFileSync(
      join(context, 'Dockerfile'),
      [
        `FROM ${base}`,
        'COPY runner.cjs harness.cjs scenario.json /harness/',
        'COPY sluice /usr/local/bin/sluice',
        '',
      ].join('\n'),
    );
    execFileSync('docker', ['build', '-q', '-t', HARNESS_IMAGE, context], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return HARNESS_IMAGE;
}
