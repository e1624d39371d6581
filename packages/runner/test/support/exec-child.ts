import { runExecCommand } from '@sluice/runner';

/** `sluice exec [--standby]` in a process of its own, from source: argv after this file is exec's. */
void runExecCommand({
  env: process.env,
  stderr: (text) => process.stderr.write(text),
  args: process.argv.slice(2),
}).then((code) => process.exit(code));
