// The benchmarks' own tests (bench/lib/*.test.ts), outside the main jest run
// (PostgreSQL only, no Docker):  npx jest -c bench/jest.config.cjs
// Same transform and PostgreSQL global setup as the root jest.config.cjs.
const root = require('../jest.config.cjs');
const [template] = root.projects;
module.exports = {
  rootDir: __dirname,
  globalSetup: '<rootDir>/../jest/global-setup.ts',
  globalTeardown: '<rootDir>/../jest/global-teardown.ts',
  testTimeout: root.testTimeout,
  maxWorkers: 1,
  projects: [
    {
      ...template,
      displayName: 'bench',
      rootDir: __dirname,
      testMatch: ['<rootDir>/**/*.test.ts'],
      moduleNameMapper: {
        '^@sluice/([a-z-]+)$': '<rootDir>/../packages/$1/src',
        '^@sluice/([a-z-]+)/([a-z-]+)$': '<rootDir>/../packages/$1/src/$2',
        '^(\\.{1,2}/.*)\\.js$': '$1',
      },
    },
  ],
};
