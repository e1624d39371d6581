'use strict';
// `sluice exec` as the apps start it: the runner as loadRunner (dist/bundled.js)
// loads it from a build. argv: <bundle directory or "built"> exec [--standby].
// Before running, it says on stderr how the runner was loaded.
const { loadRunner, RUNNER_BUNDLE_DIR } = require('../../dist/bundled.js');

const [dir, ...args] = process.argv.slice(2);
const { runner, from } = loadRunner(dir === 'built' ? RUNNER_BUNDLE_DIR : dir);
process.stderr.write(`runner loaded from ${from}\n`);
void runner
  .runExecCommand({ env: process.env, stderr: (text) => process.stderr.write(text), args: args.slice(1) })
  .then((code) => process.exit(code));
