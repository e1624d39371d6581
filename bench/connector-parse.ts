// Connector output parse throughput: RECORD lines (200 B and 2 KB, as the
// example source writes them) split and validated by @sluice/connector-protocol,
// next to the floor measured in the same run: JSON.parse of the same lines,
// already split into strings. One thread, no I/O: the input is in memory, cut
// into 64 KiB chunks (a pipe's buffer). Then the same through a real pipe:
// the example source-sequence as a child process, its stdout parsed, next to
// only counting the bytes of the same output. Run with `pnpm bench connector-parse`.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import {
  ConnectorOutputParser,
  readConnectorOutput,
  readConnectorOutputBatches,
} from '@sluice/connector-protocol';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Bytes of RECORD lines per case, so both record sizes parse the same volume. */
const VOLUME = Number(process.env.BENCH_BYTES ?? 100 * 1024 * 1024);
const CHUNK = 64 * 1024;

function recordLines(size: number, count: number): string[] {
  const at = Date.now();
  const bare = (id: number) =>
    `{"type":"RECORD","record":{"stream":"users","emitted_at":${at},"data":{"id":${id},"payload":""}}}`;
  const lines: string[] = [];
  for (let id = 1; id <= count; id++) {
    const line = bare(id);
    lines.push(line.replace('"payload":""', `"payload":"${'x'.repeat(Math.max(0, size - line.length))}"`));
  }
  return lines;
}

function chunksOf(lines: string[]): Buffer[] {
  const all = Buffer.from(lines.join('\n') + '\n');
  const chunks: Buffer[] = [];
  for (let i = 0; i < all.length; i += CHUNK) chunks.push(all.subarray(i, i + CHUNK));
  return chunks;
}

type Way = (lines: string[], chunks: Buffer[]) => Promise<number>;

const ways: Record<string, Way> = {
  'floor: JSON.parse of the split lines': async (lines) => {
    let n = 0;
    for (const line of lines) if ((JSON.parse(line) as { type: string }).type === 'RECORD') n++;
    return n;
  },
  'floor: split the chunks, decode, JSON.parse': async (_lines, chunks) => {
    let n = 0;
    let rest: Buffer | undefined;
    for (let chunk of chunks) {
      if (rest) chunk = Buffer.concat([rest, chunk]);
      let pos = 0;
      for (let nl = chunk.indexOf(10, pos); nl !== -1; nl = chunk.indexOf(10, pos)) {
        if ((JSON.parse(chunk.toString('utf8', pos, nl)) as { type: string }).type === 'RECORD') n++;
        pos = nl + 1;
      }
      rest = pos < chunk.length ? chunk.subarray(pos) : undefined;
    }
    return n;
  },
  'ConnectorOutputParser.push (sync, per chunk)': async (_lines, chunks) => {
    const parser = new ConnectorOutputParser();
    let n = 0;
    for (const chunk of chunks) for (const p of parser.push(chunk)) if (p.kind === 'message') n++;
    return n;
  },
  'readConnectorOutputBatches (Readable)': async (_lines, chunks) => {
    let n = 0;
    for await (const batch of readConnectorOutputBatches(Readable.from(chunks))) {
      for (const p of batch) if (p.kind === 'message') n++;
    }
    return n;
  },
  'readConnectorOutput (Readable, line by line)': async (_lines, chunks) => {
    let n = 0;
    for await (const p of readConnectorOutput(Readable.from(chunks))) if (p.kind === 'message') n++;
    return n;
  },
};

const SOURCE = path.resolve(__dirname, '../examples/connectors/source-sequence/main.cjs');
const PIPE_RECORDS = Number(process.env.BENCH_PIPE_RECORDS ?? 1_000_000);

/** Runs `source-sequence read` with one stream of `records` records and consumes its stdout with `consume`. */
async function fromSource(
  size: number,
  records: number,
  consume: (out: NodeJS.ReadableStream) => Promise<number>,
): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-parse-'));
  const config = path.join(dir, 'config.json');
  const catalog = path.join(dir, 'catalog.json');
  writeFileSync(
    config,
    JSON.stringify({
      streams: ['users'],
      records_per_stream: records,
      record_size_bytes: size,
      state_every: 10_000,
    }),
  );
  const stream = { name: 'users', json_schema: {}, supported_sync_modes: ['full_refresh'] };
  writeFileSync(
    catalog,
    JSON.stringify({ streams: [{ stream, sync_mode: 'full_refresh', destination_sync_mode: 'append' }] }),
  );
  const child = spawn(process.execPath, [SOURCE, 'read', '--config', config, '--catalog', catalog], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('close', resolve));
  const n = await consume(child.stdout);
  await exited;
  return n;
}

const pipeWays: Record<string, (size: number, records: number) => Promise<number>> = {
  'floor: source | count bytes': (size, records) =>
    fromSource(size, records, async (out) => {
      let bytes = 0;
      for await (const chunk of out) bytes += (chunk as Buffer).length;
      return Math.floor(bytes / (size + 1));
    }),
  'source | readConnectorOutputBatches': (size, records) =>
    fromSource(size, records, async (out) => {
      let n = 0;
      for await (const batch of readConnectorOutputBatches(out as AsyncIterable<Buffer>)) {
        for (const p of batch) if (p.kind === 'message' && p.message.type === 'RECORD') n++;
      }
      return n;
    }),
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export async function main(): Promise<void> {
  const results: Array<Record<string, number | string>> = [];
  for (const size of [200, 2048]) {
    const count = Math.floor(VOLUME / (size + 1));
    const lines = recordLines(size, count);
    const chunks = chunksOf(lines);
    const bytes = chunks.reduce((s, c) => s + c.length, 0);
    const samples = new Map<string, number[]>(Object.keys(ways).map((k) => [k, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Rotating the order spreads warm-up and GC across the ways.
      const names = Object.keys(ways);
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length]!;
        const t0 = process.hrtime.bigint();
        const n = await ways[name]!(lines, chunks);
        const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
        if (n !== count) throw new Error(`${name}: ${n} records, expected ${count}`);
        samples.get(name)!.push(seconds);
      }
    }
    const floor = median(samples.get(Object.keys(ways)[0]!)!);
    for (const [name, s] of samples) {
      const seconds = median(s);
      results.push({
        recordBytes: size,
        way: name,
        records: count,
        recordsPerSecond: Math.round(count / seconds),
        mbPerSecond: Math.round(bytes / seconds / 1e5) / 10,
        ofFloor: Math.round((floor / seconds) * 100) / 100,
      });
    }
  }

  for (const size of [200, 2048]) {
    // The same volume for both sizes would make the 2 KB case ten times longer.
    const count = size > 1000 ? Math.floor(PIPE_RECORDS / 4) : PIPE_RECORDS;
    const samples = new Map<string, number[]>(Object.keys(pipeWays).map((k) => [k, []]));
    for (let round = 0; round < Math.min(ROUNDS, 3); round++) {
      for (const [name, way] of Object.entries(pipeWays)) {
        const t0 = process.hrtime.bigint();
        const n = await way(size, count);
        samples.get(name)!.push(Number(process.hrtime.bigint() - t0) / 1e9);
        // The floor only estimates its count from the bytes (STATE and LOG lines are in there too).
        if (Math.abs(n - count) > count / 100) throw new Error(`${name}: ${n} records, expected ${count}`);
      }
    }
    const floor = median(samples.get(Object.keys(pipeWays)[0]!)!);
    for (const [name, s] of samples) {
      const seconds = median(s);
      results.push({
        recordBytes: size,
        way: name,
        records: count,
        recordsPerSecond: Math.round(count / seconds),
        mbPerSecond: Math.round((count * (size + 1)) / seconds / 1e5) / 10,
        ofFloor: Math.round((floor / seconds) * 100) / 100,
      });
    }
  }

  console.log('\n| record | way | records/s | MB/s | × floor |');
  console.log('|---:|---|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.recordBytes} B | ${r.way} | ${r.recordsPerSecond} | ${r.mbPerSecond} | ${r.ofFloor} |`,
    );
  }
  const date = new Date().toISOString().slice(0, 10);
  const out = path.join(__dirname, 'results', `connector-parse-${date}.json`);
  mkdirSync(path.dirname(out), { recursive: true });
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    node: process.version,
    loadAverage: os.loadavg().map((l) => Math.round(l * 10) / 10),
  };
  writeFileSync(
    out,
    `${JSON.stringify({ bench: 'connector-parse', date, rounds: ROUNDS, volumeBytes: VOLUME, machine, results }, null, 2)}\n`,
  );
  console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
}
