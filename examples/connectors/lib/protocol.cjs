// The connector side of the protocol for the example connectors: argument
// parsing, buffered output with backpressure, and reading stdin line by line.
// Plain Node built-ins so the connectors run without a build step.
'use strict';
const fs = require('node:fs');
const { StringDecoder } = require('node:string_decoder');

/** `read --config c.json --catalog k.json --state s.json` → { command, config, catalog, state } (paths). */
function parseArgs(argv) {
  const [command, ...rest] = argv;
  const args = { command };
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i];
    if (!flag.startsWith('--') || i + 1 >= rest.length) throw new ConfigError(`unexpected argument ${flag}`);
    args[flag.slice(2)] = rest[++i];
  }
  return args;
}

/** A problem with what the user configured: reported as failure_type config_error. */
class ConfigError extends Error {}

function readJson(path, what) {
  if (!path) throw new ConfigError(`--${what} is required`);
  try {
    return JSON.parse(fs.readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot read the ${what} file ${path}: ${err.message}`);
  }
}

/**
 * Protocol lines to stdout, gathered into writes of about 64 KiB (one write
 * per record would cost more than the record), and waiting for 'drain' when
 * the reader is slower: the connector then slows down instead of buffering.
 */
class Output {
  constructor(stream = process.stdout) {
    this.stream = stream;
    this.parts = [];
    this.size = 0;
  }

  /** Queues a line (a string without its newline); resolves at once unless a flush had to wait. */
  line(text) {
    this.parts.push(text);
    this.size += text.length + 1;
    return this.size >= 65536 ? this.flush() : undefined;
  }

  send(message) {
    return this.line(JSON.stringify(message));
  }

  flush() {
    if (this.parts.length === 0) return Promise.resolve();
    const text = this.parts.join('\n') + '\n';
    this.parts = [];
    this.size = 0;
    return new Promise((resolve, reject) => {
      const ok = this.stream.write(text, (err) => (err ? reject(err) : undefined));
      if (ok) resolve();
      else this.stream.once('drain', resolve);
    });
  }
}

const out = new Output();

function log(level, message) {
  return out.send({ type: 'LOG', log: { level, message } });
}

/** Reports the failure as a TRACE error, flushes, and exits 1. */
async function fail(err) {
  const configError = err instanceof ConfigError;
  await out.send({
    type: 'TRACE',
    trace: {
      type: 'ERROR',
      emitted_at: Date.now(),
      error: {
        message: err.message,
        internal_message: configError ? undefined : String(err.stack || err),
        failure_type: configError ? 'config_error' : 'system_error',
      },
    },
  });
  await out.flush();
  process.exit(1);
}

/** Lines of stdin (without newline or CR), read only as fast as the caller consumes them. */
async function* stdinLines(stream = process.stdin) {
  const decoder = new StringDecoder('utf8'); // keeps a character split across chunks whole
  let rest = '';
  for await (const chunk of stream) {
    const text = rest + decoder.write(chunk);
    const lines = text.split('\n');
    rest = lines.pop();
    for (const line of lines) yield line.endsWith('\r') ? line.slice(0, -1) : line;
  }
  rest += decoder.end();
  if (rest) yield rest;
}

/** Runs a connector's command table: { spec, check, discover, read | write }. */
function run(commands) {
  process.stdout.on('error', () => process.exit(1)); // the reader went away (EPIPE)
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    return fail(err);
  }
  const command = commands[args.command];
  if (!command)
    return fail(
      new ConfigError(`unknown command ${args.command}; expected ${Object.keys(commands).join(', ')}`),
    );
  Promise.resolve()
    .then(() => command(args))
    .then(() => out.flush())
    .catch(fail);
}

module.exports = { ConfigError, Output, fail, log, out, parseArgs, readJson, run, stdinLines };
