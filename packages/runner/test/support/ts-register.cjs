/**
 * Lets a child `node` process run this repository's TypeScript sources, the
 * way jest does (swc, CommonJS, `@sluice/x` → packages/x/src). Used only by
 * tests that need the runner in a process of its own (signals).
 *   node -r ./ts-register.cjs some-entry.ts
 */
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');

const repoRoot = path.resolve(__dirname, '../../../..');
const resolveFilename = Module._resolveFilename;

Module._resolveFilename = function (request, ...rest) {
  const match = /^@sluice\/([a-z-]+)$/.exec(request);
  const target = match ? path.join(repoRoot, 'packages', match[1], 'src', 'index.ts') : request;
  return resolveFilename.call(this, target, ...rest);
};

Module._extensions['.ts'] = function (module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};
