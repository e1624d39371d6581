import { runExecCommand } from '@sluice/runner';

/** `sluice exec [--standby]` in a process of its own, from source: argv after this file is exec's. */
// void: resolves to the exit code; a rejection is an uncaught error (stack, exit 1), as for the real binary.
void runExecCommand({
  env: process.env,
  stderr: (text) => process.stderr.write(text),
  args: process.argv.slice(2),
}).then((code) => process.exit(code));
