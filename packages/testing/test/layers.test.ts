import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * The layers of eslint.config.mjs bite: an import the layer rules forbid fails `eslint`
 * with @nx/enforce-module-boundaries, an allowed one passes. The fixtures are linted as text
 * under a path inside the package they pretend to belong to; no file is written.
 */
const repoRoot = path.resolve(__dirname, '../../..');
const BOUNDARIES = '@nx/enforce-module-boundaries';

/**
 * ESLint's Node API in a child process (jest's module sandbox cannot load the ESM config file):
 * lints each {file, code} of stdin as text, with the type-aware rules off — typed linting needs
 * the file in a tsconfig program and a text-only fixture is in none — and prints the messages.
 */
const LINT_TEXTS = `
import { ESLint } from 'eslint';
import { readFileSync } from 'node:fs';
const eslint = new ESLint({
  cwd: process.cwd(),
  overrideConfig: {
    languageOptions: { parserOptions: { project: null, projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off' },
  },
});
const out = [];
for (const { file, code } of JSON.parse(readFileSync(0, 'utf8'))) {
  const [result] = await eslint.lintText(code, { filePath: file });
  out.push(result.messages.map(({ ruleId, severity, message }) => ({ ruleId, severity, message })));
}
process.stdout.write(JSON.stringify(out));
`;

type Message = { ruleId: string | null; severity: number; message: string };

/** Lints every fixture in one ESLint process; the messages of each, in order. */
function lintTexts(fixtures: { file: string; code: string }[]): Message[][] {
  // The rule reads Nx's cached project graph (tags included) and skips itself without one,
  // as on a fresh clone; computing the graph writes that cache.
  const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' };
  const nx = require.resolve('nx/bin/nx.js', { paths: [repoRoot] });
  execFileSync(process.execPath, [nx, 'show', 'projects'], { cwd: repoRoot, env, stdio: 'ignore' });
  const input = JSON.stringify(fixtures.map((f) => ({ ...f, file: path.join(repoRoot, f.file) })));
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', LINT_TEXTS], {
    cwd: repoRoot,
    env,
    input,
  });
  return JSON.parse(output.toString()) as Message[][];
}

const fixtures: { file: string; code: string }[] = [];
let results: Message[][] = [];

/** Registers a fixture (linted together in beforeAll); the boundary errors eslint reported for it. */
function fixture(file: string, imports: string[]): () => string[] {
  const index = fixtures.length;
  const lines = imports.map((name, i) => `import * as dependency${i} from '${name}';`);
  const code = `${lines.join('\n')}\nexport const fixture = [${imports.map((_, i) => `dependency${i}`).join(', ')}];\n`;
  fixtures.push({ file, code });
  return () => {
    const messages = results[index] ?? [];
    // Anything else (a parse error, another rule) would make the assertions meaningless.
    expect(messages.filter((m) => m.ruleId !== BOUNDARIES)).toEqual([]);
    return messages.filter((m) => m.severity === 2).map((m) => m.message);
  };
}

const runnerImportsStore = fixture('packages/runner/src/__lint_fixture__.ts', ['@sluice/store']);
const executorImportsEngine = fixture('packages/executors/src/__lint_fixture__.ts', ['@sluice/engine']);
const engineImportsExecutors = fixture('packages/engine/src/__lint_fixture__.ts', ['@sluice/executors']);
const libraryImportsApp = fixture('packages/jobs/src/__lint_fixture__.ts', ['@sluice/app-docker-executor']);
const appImportsApp = fixture('apps/server/src/__lint_fixture__.ts', ['@sluice/app-jobs']);
const srcImportsTesting = fixture('packages/engine/src/__lint_fixture__.ts', ['@sluice/testing']);
const testImportsTesting = fixture('packages/engine/test/__lint_fixture__.ts', ['@sluice/testing']);
const runnerImportsConfig = fixture('packages/runner/src/__lint_fixture__.ts', [
  '@sluice/protocol',
  '@sluice/config',
]);
const serverRuntimeImportsExecutors = fixture('packages/server-runtime/src/__lint_fixture__.ts', [
  '@sluice/executors',
  '@sluice/engine',
]);

const cliImportsApi = fixture('packages/cli/src/__lint_fixture__.ts', ['@sluice/api']);
const cliImportsSchemas = fixture('packages/cli/src/__lint_fixture__.ts', [
  '@sluice/api-schemas',
  '@sluice/config',
  '@sluice/protocol',
]);

beforeAll(() => {
  results = lintTexts(fixtures);
}, 120_000);

/** The error of a project tagged `tag` importing a layer its constraint does not list. */
const forbidden = (tag: string) =>
  expect.stringContaining(`tagged with "${tag}" can only depend on libs tagged with`);

describe('layers (eslint.config.mjs)', () => {
  it('the runner may not import the store', () => {
    expect(runnerImportsStore()).toEqual([forbidden('layer:runner')]);
  });

  it('the executor side may not import the engine', () => {
    expect(executorImportsEngine()).toEqual([forbidden('layer:executor')]);
  });

  it('the control plane may not import the executor side (only the server runtime may)', () => {
    expect(engineImportsExecutors()).toEqual([forbidden('layer:control')]);
  });

  it('no library imports an app, and no app another app', () => {
    expect(libraryImportsApp()).toEqual([forbidden('layer:control')]);
    expect(appImportsApp()).toEqual([forbidden('type:app')]);
  });

  it('production code may not import the test helpers; tests may', () => {
    expect(srcImportsTesting()).toEqual([forbidden('layer:control')]);
    expect(testImportsTesting()).toEqual([]);
  });

  it('the user CLI may not import the API (only its schemas, config and protocol)', () => {
    expect(cliImportsApi()).toEqual([forbidden('layer:client')]);
    expect(cliImportsSchemas()).toEqual([]);
  });

  it('allowed imports pass: the runner imports protocol and config, the server runtime the executor side', () => {
    expect(runnerImportsConfig()).toEqual([]);
    expect(serverRuntimeImportsExecutors()).toEqual([]);
  });
});
