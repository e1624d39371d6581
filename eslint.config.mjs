// ESLint 9 flat config for the whole workspace (`pnpm lint`).
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/*
 * Layers: which package may import which, by the Nx tags in each package.json (`nx.tags`).
 * Every library carries `type:lib` and one `layer:*` tag; apps carry `type:app`, the test
 * helpers `type:testing`. A package may import only the layers its constraint lists (its own
 * layer included); everything else fails lint with @nx/enforce-module-boundaries.
 *
 *   layer:protocol     protocol: the types and wire shapes every process shares. Imports nothing of ours.
 *   layer:config       config: the environment every process reads, the runner included. Imports protocol.
 *   layer:base         observability: logging, metrics, probes, HTTP server, stop stack, used by every
 *                      long-running process (server, jobs, executors). Imports protocol and config.
 *   layer:control-lib  flows (flow parsing and validation), auth (run and user tokens: signing keys),
 *                      secrets (the keyring that decrypts stored secrets): libraries of the control side
 *                      only. Executors and the runner must not import them — an executor never holds the
 *                      token keys or the keyring, as it never opens the database.
 *   layer:api-schemas  api-schemas: the public API's request and response zod schemas, shared by the API
 *                      (which validates with them and builds its OpenAPI document from them) and its
 *                      clients. Imports protocol and control-lib (flows: names and validation codes).
 *   layer:store        store (every SQL statement and Prisma call), bootstrap (the embedded PostgreSQL and
 *                      the secrets it generates): database access, control side only.
 *   layer:control      engine, api, jobs: the control plane. Imports the layers above, never the executor
 *                      side (it talks to executors through protocol's ExecutorProtocol).
 *   layer:server       server-runtime: the server process's composition root. Control side, and the one
 *                      library that may also import the executor side, because the standalone server
 *                      embeds the executors in its own process. (A tag of its own rather than
 *                      layer:control: every constraint whose tag a project carries applies, so engine,
 *                      api and jobs could not be kept off the executor side otherwise.)
 *   layer:executor     executors, instance, executor-runtime, owner-cleanup: the executor side. May load the
 *                      runner (an executor app's `exec` runs it in process). Never the
 *                      store, engine, api, jobs or control-lib: it reaches the control plane only over
 *                      ExecutorProtocol.
 *   layer:runner       runner: runs inside the task's container or process; protocol and config only.
 *   layer:client       cli: the user CLI (sluice login, apply, run, ...). A client of the public API over
 *                      HTTP: protocol, config and api-schemas only, never the store, engine, api or
 *                      executors — it holds no database and no server secret.
 *   type:app           apps/*: thin binaries over the libraries. Nothing imports an app.
 *   type:testing       testing: test helpers. Only tests import it (see testDepConstraints).
 */
const depConstraints = [
  { sourceTag: 'layer:protocol', onlyDependOnLibsWithTags: ['layer:protocol'] },
  { sourceTag: 'layer:config', onlyDependOnLibsWithTags: ['layer:protocol', 'layer:config'] },
  { sourceTag: 'layer:base', onlyDependOnLibsWithTags: ['layer:protocol', 'layer:config', 'layer:base'] },
  {
    sourceTag: 'layer:control-lib',
    onlyDependOnLibsWithTags: ['layer:protocol', 'layer:config', 'layer:base', 'layer:control-lib'],
  },
  {
    sourceTag: 'layer:api-schemas',
    onlyDependOnLibsWithTags: ['layer:protocol', 'layer:control-lib', 'layer:api-schemas'],
  },
  {
    sourceTag: 'layer:store',
    onlyDependOnLibsWithTags: [
      'layer:protocol',
      'layer:config',
      'layer:base',
      'layer:control-lib',
      'layer:store',
    ],
  },
  {
    sourceTag: 'layer:control',
    onlyDependOnLibsWithTags: [
      'layer:protocol',
      'layer:config',
      'layer:base',
      'layer:control-lib',
      'layer:store',
      'layer:api-schemas',
      'layer:control',
    ],
  },
  {
    sourceTag: 'layer:server',
    onlyDependOnLibsWithTags: [
      'layer:protocol',
      'layer:config',
      'layer:base',
      'layer:control-lib',
      'layer:store',
      'layer:control',
      'layer:executor',
    ],
  },
  {
    sourceTag: 'layer:executor',
    onlyDependOnLibsWithTags: [
      'layer:protocol',
      'layer:config',
      'layer:base',
      'layer:executor',
      'layer:runner',
    ],
  },
  { sourceTag: 'layer:runner', onlyDependOnLibsWithTags: ['layer:protocol', 'layer:config'] },
  {
    sourceTag: 'layer:client',
    onlyDependOnLibsWithTags: ['layer:protocol', 'layer:config', 'layer:api-schemas', 'layer:client'],
  },
  // Apps import libraries, never another app (no constraint lists type:app) nor the test helpers.
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
  // The test helpers may use any library (fakes of protocol, harnesses over real processes).
  { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:lib', 'type:testing'] },
];
/** Tests may also use the testing helpers (type:testing); production code may not. */
const testDepConstraints = depConstraints.map((constraint) =>
  constraint.onlyDependOnLibsWithTags.includes('type:testing')
    ? constraint
    : { ...constraint, onlyDependOnLibsWithTags: [...constraint.onlyDependOnLibsWithTags, 'type:testing'] },
);
const TYPED_FILES = ['{packages,apps}/*/{src,test}/**/*.ts', 'jest/**/*.ts'];
const TEST_FILES = ['**/test/**/*.ts', '**/*.test.ts', 'jest/**/*.ts', 'bench/**/*.ts'];

const nodeGlobals = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'require',
    'module',
    'exports',
    '__dirname',
    '__filename',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'clearImmediate',
    'URL',
    'URLSearchParams',
    'fetch',
    'AbortController',
    'TextEncoder',
    'TextDecoder',
    'structuredClone',
  ].map((name) => [name, 'readonly']),
);

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/generated/**',
      '**/coverage/**',
      '.nx/**',
      'bench/.tmp/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { '@nx': nx },
    languageOptions: { globals: nodeGlobals },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        { enforceBuildableLibDependency: false, allow: [], depConstraints },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/src/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
  {
    // Type-aware rules for the packages' and apps' TypeScript: a promise nobody awaits loses its
    // rejection (and its ordering). The types come from the one program of `pnpm typecheck`
    // (tsconfig.typecheck.json) rather than `projectService`, which builds a program per package
    // tsconfig and checks the shared packages in each: 17 s of CPU instead of 41 s on 2 cores.
    files: TYPED_FILES,
    languageOptions: {
      parserOptions: { project: './tsconfig.typecheck.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: TEST_FILES,
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        // Tests may import their own package by name, through its public entry point.
        {
          enforceBuildableLibDependency: false,
          allowCircularSelfDependency: true,
          allow: [],
          depConstraints: testDepConstraints,
        },
      ],
      '@typescript-eslint/no-explicit-any': 'warn',
    },
  },
  {
    // CommonJS scripts (bin/, scripts/, jest.config.cjs) load with require().
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
