import { PassThrough } from 'node:stream';
import { main } from '../src/main';

function io(env: NodeJS.ProcessEnv = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString()));
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString()));
  return { io: { env, stdout, stderr }, out: () => out.join(''), err: () => err.join('') };
}

describe('sluice jobs', () => {
  it('prints usage and the variables it reads for --help', async () => {
    const run = io();
    expect(await main(['jobs', '--help'], run.io)).toBe(0);
    expect(run.out()).toContain('Usage: sluice jobs');
    expect(run.out()).toContain('SLUICE_DATABASE_URL (or DB_DSN)');
    expect(run.out()).toContain('PIPELINE_HEARTBEAT_TIMEOUT [default: 30s]');
    expect(run.out()).not.toContain('HTTP_SERVER_ADDR [default: 0.0.0.0:8080]');
  });

  it('exits 2 naming the missing database URL', async () => {
    const run = io();
    expect(await main(['jobs'], run.io)).toBe(2);
    expect(run.err()).toContain('SLUICE_DATABASE_URL or DB_DSN');
  });

  it('exits 2 saying what is not available yet once the configuration is valid', async () => {
    const run = io({ DB_DSN: 'postgres://u:p@db/sluice' });
    expect(await main(['jobs'], run.io)).toBe(2);
    expect(run.err()).toContain('not available yet');
    expect(run.err()).toContain('distributed-mode issue');
  });

  it('refuses unknown arguments', async () => {
    const run = io();
    expect(await main(['jobs', '--frobnicate'], run.io)).toBe(2);
    expect(run.err()).toContain('unknown argument --frobnicate');
  });
});
