#!/usr/bin/env node
// Runs TypeScript benchmarks from source, no build needed:
//   node bench/run.cjs                 every bench/*.ts
//   node bench/run.cjs claim-store     bench/claim-store.ts
// .ts files are compiled on require with @swc/core (already a dev dependency
// for jest), and `@sluice/<pkg>` resolves to packages/<pkg>/src, as in tests.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

require('./register.cjs');

async function main() {
  const names = process.argv.slice(2);
  const files = names.length
    ? names.map((n) => path.join(__dirname, n.endsWith('.ts') ? n : `${n}.ts`))
    : fs
        .readdirSync(__dirname)
        .filter((f) => f.endsWith('.ts'))
        .map((f) => path.join(__dirname, f));
  for (const file of files) {
    console.log(`# ${path.relative(root, file)}`);
    const bench = require(file);
    await bench.main();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
