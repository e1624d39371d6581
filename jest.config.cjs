/** One jest run over every package and app; PostgreSQL is started once in global setup. */
const swc = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
];
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j|mj)s$': swc },
  // ESM-only dependencies are transformed too.
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/)?(jose|@kubernetes|openid-client|oauth4webapi))'],
};
const mapSluiceTo = (packages) => ({
  '^@sluice/([a-z-]+)$': `${packages}/$1/src`,
  '^@sluice/([a-z-]+)/([a-z-]+)$': `${packages}/$1/src/$2`,
  // TypeScript sources that import siblings as './x.js' (Prisma's generated client does).
  '^(\\.{1,2}/.*)\\.js$': '$1',
});
const project = (dir) => ({
  ...shared,
  displayName: dir,
  rootDir: `<rootDir>/${dir}`,
  testMatch: ['<rootDir>/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  moduleNameMapper: mapSluiceTo('<rootDir>/../../packages'),
});
// The benchmarks' own helpers (bench/lib) have tests too; the benchmarks themselves are not tests.
const benchProject = {
  ...shared,
  displayName: 'bench',
  rootDir: '<rootDir>/bench',
  testMatch: ['<rootDir>/lib/**/*.test.ts'],
  moduleNameMapper: mapSluiceTo('<rootDir>/../packages'),
};
const fs = require('node:fs');
const dirs = ['packages', 'apps'].flatMap((top) =>
  fs.readdirSync(`${__dirname}/${top}`).map((d) => `${top}/${d}`),
);
module.exports = {
  globalSetup: '<rootDir>/jest/global-setup.ts',
  globalTeardown: '<rootDir>/jest/global-teardown.ts',
  projects: [...dirs.map(project), benchProject],
  testTimeout: 60000,
  // One test file at a time: the end-to-end files run whole topologies (servers, runners,
  // containers) and a 2-core machine shared by two of them turns heartbeats late.
  maxWorkers: 1,
};
