// A stand-in for `sluice exec`, started by the process executor in tests.
// argv: <mode> <outDir>. Writes what the test needs to know into outDir.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const [mode, outDir] = process.argv.slice(2);
const write = (name, value) => fs.writeFileSync(path.join(outDir, name), JSON.stringify(value));
// /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces, so split after ')'.
const pgidOf = (pid) => Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[2]);

process.stderr.write('fake runner diagnostics: starting\n');
if (mode === 'env') {
  write('env.json', process.env);
  write('ids.json', { pid: process.pid, pgid: pgidOf(process.pid) });
  process.exit(0);
} else if (mode === 'trap') {
  process.on('SIGTERM', () => {
    write('signal.json', 'SIGTERM');
    process.exit(143);
  });
  setInterval(() => undefined, 1000);
  write('ready.json', true);
} else if (mode === 'stubborn') {
  process.on('SIGTERM', () => write('signal.json', 'SIGTERM (ignored)'));
  // A helper in the runner's own group: a group kill must take it too.
  const helper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  setInterval(() => undefined, 1000);
  write('ready.json', { helperPid: helper.pid });
} else if (mode === 'exit') {
  process.exit(Number(process.argv[4] ?? 0));
}
