#!/usr/bin/env node
'use strict';
/**
 * The single `sluice` entry point for people who run the source
 * (`pnpm sluice <command>`). It requires only the app of the chosen command —
 * the process executor starts `sluice exec` for every task, so start-up time
 * matters — and exits with the code that app's main() returns.
 */
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** command → [app directory, one-line summary] */
const COMMANDS = {
  server: ['server', 'Public API and UI plus the internal API; with --standalone, everything in one process'],
  token: ['server', 'Create a user token: sluice token create --workspace W --user U --role admin|member'],
  jobs: ['jobs', 'Scheduler, watchdog, retention and event consumers (distributed mode)'],
  'docker-executor': [
    'docker-executor',
    'An instance running docker tasks, talking to a server over the internal API',
  ],
  'k8s-executor': ['k8s-executor', 'An instance running kubernetes tasks as Jobs'],
  login: ['cli', 'Check a token against a server and save both for the commands below'],
  apply: [
    'cli',
    'Push a namespace folder (namespace.yaml, flows/, files/): validate, show the changes, store',
  ],
  run: ['cli', 'Start an execution of <namespace>/<flow>; --follow streams its logs, exit 0 if it succeeded'],
  executions: ['cli', 'List executions (sluice executions list) or show one (sluice executions get <id>)'],
  logs: ['cli', 'Print the log lines of a task run; -f follows them until it ends'],
  cancel: ['cli', 'Request the cancellation of an execution'],
  exec: ['runner', 'The runner: runs one task run inside its process, container or pod'],
  'connector-pipe': ['runner', "A docker sync's connector container: the connector on the sync's pipes"],
  'runner-install': ['runner', 'Copy the runner into a directory (the kubernetes init container)'],
  connector: [
    'runner',
    'Connector tools: sluice connector test <command...> checks a connector speaks the protocol',
  ],
};

function usage() {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, [, summary]]) => `  ${name.padEnd(width)}  ${summary}`);
  return `Usage: sluice <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun sluice <command> --help for its options and environment variables.\n`;
}

function run(argv) {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(usage());
    return Promise.resolve(command === undefined ? 2 : 0);
  }
  const entry = COMMANDS[command];
  if (!Object.prototype.hasOwnProperty.call(COMMANDS, command) || !entry) {
    // One line, as every command answers a wrong invocation.
    process.stderr.write(`sluice: unknown command ${JSON.stringify(command)}; see sluice --help\n`);
    return Promise.resolve(2);
  }
  const main = path.join(root, 'apps', entry[0], 'dist', 'main.js');
  if (!fs.existsSync(main)) {
    process.stderr.write(
      `sluice ${command}: ${path.relative(root, main)} is missing; run \`pnpm build\` first\n`,
    );
    return Promise.resolve(1);
  }
  const app = require(main);
  if (typeof app.main !== 'function') {
    process.stderr.write(`sluice ${command}: ${path.relative(root, main)} does not export main(argv)\n`);
    return Promise.resolve(1);
  }
  return app.main([command, ...rest]);
}

run(process.argv.slice(2)).then(
  (code) => process.exit(typeof code === 'number' ? code : 0),
  (error) => {
    process.stderr.write(`sluice: ${error && error.stack ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
