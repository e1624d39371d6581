// ESLint 9 flat config for the whole workspace (`pnpm lint`).
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/** Which project may import which, by the Nx tags in each package.json. */
const depConstraints = [
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
  { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
  { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:lib', 'type:testing'] },
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
  { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:shared'] },
];
/** Tests may also use the testing helpers (type:testing); production code may not. */
const testDepConstraints = depConstraints.map((constraint) =>
  constraint.sourceTag.startsWith('type:') && constraint.sourceTag !== 'type:testing'
    ? { ...constraint, onlyDependOnLibsWithTags: [...constraint.onlyDependOnLibsWithTags, 'type:testing'] }
    : constraint,
);
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
