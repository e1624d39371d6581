// A stand-in for `sluice exec`, started by the process executor in tests.
// argv: <mode> <outDir> [--standby]. Writes what the test needs to know into outDir.
// With --standby it first records itself as standby-<pid>.json, reads one line
// from stdin (its assignment, saved as assignment-<pid>.json) and then acts as
// <mode>; stdin ending before the line makes it exit 0 (standby-eof-<pid>.json).
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const [mode, outDir] = process.argv.slice(2);
const standby = process.argv.includes('--standby');
const write = (name, value) => fs.writeFileSync(path.join(outDir, name), JSON.stringify(value));
// /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces, so split after ')'.
const pgidOf = (pid) => Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[2]);

function act() {
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
  } else if (mode === 'plain') {
    // No SIGTERM handler, as a runner still loading: the signal kills it.
    setInterval(() => undefined, 1000);
    write('ready.json', true);
  } else if (mode === 'whoami') {
    // Who the runner runs as, where, and whether a file only root may read (argv[4]) is out of reach.
    let secret;
    try {
      secret = fs.readFileSync(process.argv[4], 'utf8');
    } catch (err) {
      secret = err.code;
    }
    write(`whoami-${process.pid}.json`, {
      uid: process.getuid(),
      gid: process.getgid(),
      groups: process.getgroups(),
      cwd: process.cwd(),
      env: process.env,
      tmpdir: require('node:os').tmpdir(),
      secret,
    });
    process.exit(0);
  } else if (mode === 'exit') {
    process.exit(Number(process.argv[4] ?? 0));
  } else if (mode === 'crash-standby') {
    // Only reached when a standby got an assignment; crash-standby standbys die before that.
    process.exit(0);
  }
}

if (!standby) {
  act();
} else if (mode === 'crash-standby') {
  write(`standby-${process.pid}.json`, { pid: process.pid, env: process.env });
  process.stderr.write('fake runner: broken standby\n');
  process.exit(3);
} else {
  write(`standby-${process.pid}.json`, { pid: process.pid, env: process.env });
  let buffered = '';
  let assigned = false;
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    if (assigned) return;
    buffered += chunk;
    const newline = buffered.indexOf('\n');
    if (newline === -1) return;
    assigned = true;
    write(`assignment-${process.pid}.json`, JSON.parse(buffered.slice(0, newline)));
    act();
  });
  process.stdin.on('end', () => {
    if (assigned) return;
    write(`standby-eof-${process.pid}.json`, true);
    process.exit(0);
  });
}
