// Lets Node run the TypeScript benchmarks (and the worker processes they
// spawn, via `node -r ./bench/register.cjs`) from source: .ts files are
// compiled on require with @swc/core, and `@sluice/<pkg>` resolves to
// packages/<pkg>/src, as in tests.
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const swc = require('@swc/core');

const root = path.resolve(__dirname, '..');

require.extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  const pkg = /^@sluice\/([a-z-]+)$/.exec(request);
  if (pkg) return path.join(root, 'packages', pkg[1], 'src', 'index.ts');
  try {
    return resolve.call(this, request, parent, ...rest);
  } catch (err) {
    // TypeScript sources may import siblings as './x.js' (Prisma's generated client does).
    if (/^\.\.?\//.test(request) && request.endsWith('.js')) {
      return resolve.call(this, request.slice(0, -3), parent, ...rest);
    }
    throw err;
  }
};
