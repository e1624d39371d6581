#!/usr/bin/env node
'use strict';
/**
 * Rewrites the environment variable table in README.md, between
 * <!-- config-table:start --> and <!-- config-table:end -->, from the
 * variable definitions of the built config package (`pnpm build` first).
 * With --check it changes nothing and exits 1 when the table is out of date.
 */
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const readmePath = path.join(root, 'README.md');
const distPath = path.join(root, 'packages', 'config', 'dist', 'index.js');
const START = '<!-- config-table:start -->';
const END = '<!-- config-table:end -->';

function cell(text) {
  return String(text).replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\n/g, ' ');
}

function table(vars) {
  const folded = new Map();
  for (const v of vars) {
    if (v.aliasOf) folded.set(v.aliasOf, [...(folded.get(v.aliasOf) || []), v.name]);
  }
  const rows = vars
    .filter((v) => !v.aliasOf)
    .map((v) => {
      const others = [...v.aliases, ...(folded.get(v.name) || [])].map((name) => `\`${name}\``);
      const name = `\`${v.name}\`${others.length ? `<br>or ${others.join(' + ')}` : ''}`;
      const fallback = v.default === undefined ? '—' : `\`${v.default}\``;
      const secret = v.secret ? ' *(secret)*' : '';
      return `| ${name} | ${fallback} | ${v.apps.join(', ')} | ${cell(v.description)}${secret} |`;
    });
  return ['| Variable | Default | Read by | Description |', '|---|---|---|---|', ...rows].join('\n');
}

/** The table as `pnpm format` would write it, so formatting the README never makes it stale. */
async function formatted(markdown) {
  const prettier = require('prettier');
  const options = (await prettier.resolveConfig(readmePath)) || {};
  return (await prettier.format(markdown, { ...options, parser: 'markdown' })).trimEnd();
}

async function main() {
  if (!fs.existsSync(distPath)) {
    process.stderr.write(
      `config-table: ${path.relative(root, distPath)} is missing; run \`pnpm build\` first\n`,
    );
    return 1;
  }
  const { allVars } = require(distPath);
  // Blank lines around the table, as prettier keeps markdown between the markers.
  const block = `${START}\n\n${await formatted(table(allVars()))}\n\n${END}`;
  const current = fs.existsSync(readmePath)
    ? fs.readFileSync(readmePath, 'utf8')
    : `# Sluice\n\n## Environment variables\n\n${START}\n${END}\n`;
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  if (start < 0 || end < start) {
    process.stderr.write(`config-table: README.md has no ${START} … ${END} block\n`);
    return 1;
  }
  const next = current.slice(0, start) + block + current.slice(end + END.length);
  if (process.argv.includes('--check')) {
    if (next === current) return 0;
    process.stderr.write('config-table: README.md is out of date; run `pnpm docs:config`\n');
    return 1;
  }
  fs.writeFileSync(readmePath, next);
  process.stdout.write(`config-table: wrote ${allVars().length} variables to README.md\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`config-table: ${error && error.stack ? error.stack : error}\n`);
    process.exitCode = 1;
  },
);
