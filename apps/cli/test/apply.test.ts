import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { apiClient } from '@sluice/testing';
import { REPO, freshHome, sluice } from './binary';
import { useServer } from './harness';

// `sluice login` and `sluice apply` as users run them: the real binary against
// a standalone server on a real PostgreSQL (docs/cli.md).

const fixture = useServer();
const api = () => apiClient(fixture().server.publicUrl, fixture().token);

/** A namespace folder under a temporary directory: relative path → content. */
function folder(name: string, files: Record<string, string>): string {
  const root = join(mkdtempSync(join(tmpdir(), 'sluice-apply-')), name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const echoFlow = (text: string) =>
  ['tasks:', '  - id: say', '    type: command', `    command: ["echo", "${text}"]`, ''].join('\n');

describe('usage', () => {
  it('a wrong invocation is one line on stderr and exit 2; --help lists the options and variables', async () => {
    const env = { HOME: freshHome() };
    for (const args of [
      ['apply'],
      ['run', 'no-slash'],
      ['executions', 'list', '--state', 'NOPE'],
      ['logs', '-x'],
      ['nope'],
    ]) {
      const run = await sluice(args, env);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    const noServer = await sluice(['executions', 'list'], env);
    expect(noServer.code).toBe(2);
    expect(noServer.stderr).toMatch(/no server: pass --server, set SLUICE_URL or run sluice login/);
    const badUrl = await sluice(['executions', 'list'], { ...env, SLUICE_URL: 'ftp://x', SLUICE_TOKEN: 't' });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/SLUICE_URL/);
    for (const command of ['login', 'apply', 'run', 'executions', 'logs', 'cancel']) {
      const help = await sluice([command, '--help'], env);
      expect({ command, code: help.code }).toEqual({ command, code: 0 });
      expect(help.stdout).toContain(`usage: sluice ${command}`);
      expect(help.stdout).toContain('--output');
      expect(help.stdout).toContain('SLUICE_TOKEN [secret]');
    }
    const top = await sluice(['--help'], env);
    expect(top.stdout).toMatch(/apply\s+Push a namespace folder/);
  });
});

describe('sluice login', () => {
  it('checks the token against the server, then writes the config file (mode 0600) the other commands read', async () => {
    const home = freshHome();
    const env = { HOME: home };
    const refused = await sluice(
      ['login', '--server', fixture().server.publicUrl, '--token', 'not-a-token'],
      env,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the token: 401 unauthorized: .*; nothing saved/);
    expect(() => statSync(join(home, '.config', 'sluice', 'config.json'))).toThrow();

    // The token on stdin, as `sluice token create ... | sluice login --server URL` gives it.
    const ok = await sluice(['login', '--server', `${fixture().server.publicUrl}/`], env, {
      stdin: `${fixture().token}\n`,
    });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/logged in to http:\/\/127\.0\.0\.1:\d+ as cli in workspace w/);
    const path = join(home, '.config', 'sluice', 'config.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      server: fixture().server.publicUrl,
      token: fixture().token,
    });
    const listed = await sluice(['executions', 'list', '--output', 'json'], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ executions: [], nextCursor: null });
    // A flag wins over the file.
    const flagged = await sluice(['executions', 'list', '--token', 'bad'], env);
    expect(flagged.code).toBe(1);
    expect(flagged.stderr.trim()).toMatch(/^sluice executions: 401 unauthorized: /);

    const xdg = join(home, 'xdg');
    const elsewhere = await sluice(
      ['login', '--server', fixture().server.publicUrl, '--token', fixture().token],
      {
        HOME: home,
        XDG_CONFIG_HOME: xdg,
      },
    );
    expect(elsewhere.code).toBe(0);
    expect(statSync(join(xdg, 'sluice', 'config.json')).mode & 0o777).toBe(0o600);
  });
});

describe('sluice apply', () => {
  it('creates the flows and files of a folder, re-applies as unchanged, and shows an update', async () => {
    const root = folder('cli-demo', {
      'namespace.yaml': 'defaults:\n  executor:\n    type: process\n',
      'flows/hello.yaml': echoFlow('hello'),
      'flows/other.yml': echoFlow('other'),
      'files/data/rows.csv': 'a,b\n1,2\n',
      'files/readme.txt': 'notes\n',
    });
    const first = await sluice(['apply', root], fixture().env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(
      [
        'namespace cli-demo',
        '  created    namespace.yaml',
        '  created    files/data/rows.csv',
        '  created    files/readme.txt',
        '  created    flows/hello.yaml',
        '  created    flows/other.yml',
        '5 created, 0 updated, 0 unchanged',
        '',
      ].join('\n'),
    );
    expect((await api().call('GET', '/api/v1/namespaces/cli-demo/flows/hello')).body.source).toBe(
      echoFlow('hello'),
    );
    expect((await api().call('GET', '/api/v1/namespaces/cli-demo/flows/other')).status).toBe(200);
    const file = await fetch(`${fixture().server.publicUrl}/api/v1/namespaces/cli-demo/files/data/rows.csv`, {
      headers: { authorization: `Bearer ${fixture().token}` },
    });
    expect(await file.text()).toBe('a,b\n1,2\n');

    const again = await sluice(['apply', root], fixture().env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('0 created, 0 updated, 5 unchanged');

    writeFileSync(join(root, 'flows', 'hello.yaml'), echoFlow('hello again'));
    const planned = await sluice(['apply', root, '--dry-run', '--output', 'json'], fixture().env);
    expect(planned.code).toBe(0);
    const plan = JSON.parse(planned.stdout);
    expect(plan).toMatchObject({ namespace: 'cli-demo', valid: true, dryRun: true });
    expect(plan.changes).toContainEqual({ kind: 'flow', file: 'flows/hello.yaml', change: 'updated' });
    expect((await api().call('GET', '/api/v1/namespaces/cli-demo/flows/hello')).body.source).toBe(
      echoFlow('hello'),
    );
    const updated = await sluice(['apply', root, '--namespace', 'cli-demo'], fixture().env);
    expect(updated.stdout).toContain('  updated    flows/hello.yaml');
    expect(updated.stdout).toContain('0 created, 1 updated, 4 unchanged');
    expect((await api().call('GET', '/api/v1/namespaces/cli-demo/flows/hello')).body.source).toBe(
      echoFlow('hello again'),
    );
  });

  it('a folder with a broken flow stores nothing and prints each problem at its file and line', async () => {
    const root = folder('cli-broken', {
      'namespace.yaml': 'allowed_executors: [process]\n',
      'flows/good.yaml': echoFlow('fine'),
      'flows/x.yaml': [
        '# a flow with two mistakes',
        'tasks:',
        '  - id: a',
        '    type: comand',
        '  - id: b',
        '    type: command',
        '    command: ["true"]',
        '    depends_on: [nope]',
        '',
      ].join('\n'),
      'files/a.txt': 'x',
    });
    const run = await sluice(['apply', root], fixture().env);
    expect(run.code).toBe(1);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^flows\/x\.yaml:4: unknown_task_type tasks\[0\]\.type: /);
    expect(lines).toContainEqual(expect.stringMatching(/^flows\/x\.yaml:8: \w+ tasks\[1\]\.depends_on/));
    expect(lines[lines.length - 1]).toMatch(/^sluice apply: \d+ problems in 1 file; nothing stored$/);
    expect(run.stdout).toBe('');
    expect((await api().call('GET', '/api/v1/namespaces/cli-broken/flows/good')).status).toBe(404);
    expect((await api().call('GET', '/api/v1/namespaces/cli-broken/files')).body.files).toEqual([]);

    const json = await sluice(['apply', root, '--output', 'json'], fixture().env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).problems[0]).toMatchObject({
      file: 'flows/x.yaml',
      line: 4,
      code: 'unknown_task_type',
    });

    // A syntax error and a namespace.yaml problem point at their own lines.
    const other = folder('cli-broken-2', {
      'namespace.yaml': 'defaults:\n  executor:\n    type: inline\n',
      'flows/y.yaml': 'tasks:\n  - id: a\n    type: command\n    command: [echo\n',
    });
    const second = await sluice(['apply', other], fixture().env);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/^namespace\.yaml:3: invalid_executor_type /m);
    expect(second.stderr).toMatch(/^flows\/y\.yaml:\d+: yaml_syntax /m);
  });

  it('every example folder of examples/ applies (the server validates each)', async () => {
    const examples = join(REPO, 'examples');
    const folders = readdirSync(examples, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== 'connectors')
      .map((e) => e.name);
    expect(folders.length).toBeGreaterThan(0);
    for (const name of folders) {
      const run = await sluice(['apply', join(examples, name), '--output', 'json'], fixture().env);
      expect({ name, code: run.code, stderr: run.stderr }).toEqual({ name, code: 0, stderr: '' });
      expect(JSON.parse(run.stdout)).toMatchObject({ namespace: name, valid: true });
    }
    // The quick start's flow runs: its namespace file and the output of its first task reach the second.
    const hello = await sluice(['run', 'demo/hello', '--follow'], fixture().env);
    expect(hello.stdout).toBe('hello from greet.sh, sluice\ngreet said greeted=yes\n');
    expect(hello.code).toBe(0);
  });
});
