import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The repository explains itself (docs/README.md): code and comments point into
 * its own docs/, never at files outside it, and every link and citation into
 * docs/ leads somewhere that exists.
 */
const repoRoot = path.resolve(__dirname, '../../..');

/** Where code, comments, scripts and packaging live. */
const SOURCE_ROOTS = ['packages', 'apps', 'bench', 'scripts', 'docker', 'charts', 'jest', 'bin', '.ci'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'generated', 'coverage', '.tmp', '.nx']);
const SOURCE_FILE = /\.(ts|cjs|mjs|js|sh|ya?ml|json|md|tpl|prisma|sql|txt)$|Dockerfile|^run$/;
const MAX_BYTES = 1_000_000;

function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(full);
      } else if (entry.isFile() && SOURCE_FILE.test(entry.name) && statSync(full).size <= MAX_BYTES) {
        files.push(full);
      }
    }
  };
  for (const root of SOURCE_ROOTS) {
    const dir = path.join(repoRoot, root);
    if (existsSync(dir)) walk(dir);
  }
  return files;
}

const rel = (file: string) => path.relative(repoRoot, file);

/** Each line of each source file, numbered from 1. */
function* sourceLines(): Generator<{ where: string; line: string }> {
  for (const file of sourceFiles()) {
    const lines = readFileSync(file, 'utf8').split('\n');
    for (const [i, line] of lines.entries()) yield { where: `${rel(file)}:${i + 1}`, line };
  }
}

/**
 * Files outside the repository that comments used to cite. Spelled in pieces, so
 * that this file does not match itself.
 */
const OUTSIDE = [
  ['..', '/shared'],
  ['/work', '/shared'],
  ['DESIGN', '.md'],
  ['ENGINEERING', '.md'],
  ['spec', '/synclet'],
  ['spec', '/sluice'],
].map((parts) => parts.join(''));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slugify(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings (repeats get -1, -2, … as on GitHub); fenced code skipped. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading?.[1]) continue;
    const slug = slugify(heading[1]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The repository's own documentation: docs/*.md and the README. */
function docFiles(): string[] {
  const docs = readdirSync(path.join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join(repoRoot, 'docs', name));
  return [path.join(repoRoot, 'README.md'), ...docs];
}

/** What is wrong with a link to `target` (a path, optionally with #anchor) from `fromFile`; null when it resolves. */
function brokenLink(fromFile: string, target: string): string | null {
  const [file = '', anchor] = target.split('#', 2);
  const resolved = file === '' ? fromFile : path.resolve(path.dirname(fromFile), decodeURIComponent(file));
  if (!existsSync(resolved)) return `${rel(resolved)} does not exist`;
  if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
    return `${rel(resolved)} has no heading #${anchor}`;
  }
  return null;
}

describe('repository hygiene', () => {
  it('no code, comment or script points at a file outside the repository', () => {
    const found: string[] = [];
    for (const { where, line } of sourceLines()) {
      for (const outside of OUTSIDE) if (line.includes(outside)) found.push(`${where}: ${outside}`);
    }
    expect(found).toEqual([]);
  });

  it('every relative link of docs/*.md and README.md leads to a file (and heading) that exists', () => {
    const broken: string[] = [];
    for (const file of docFiles()) {
      let fenced = false;
      for (const [i, line] of readFileSync(file, 'utf8').split('\n').entries()) {
        if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
        if (fenced) continue;
        for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          const target = match[1] ?? '';
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
          const problem = brokenLink(file, target);
          if (problem) broken.push(`${rel(file)}:${i + 1}: (${target}) ${problem}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('every docs/ page and anchor a comment cites exists', () => {
    const broken: string[] = [];
    const decisions = path.join(repoRoot, 'docs', 'decisions.md');
    const sections = new Set(
      [...anchorsOf(decisions)].map((anchor) => /^(\d+)-/.exec(anchor)?.[1]).filter(Boolean),
    );
    for (const { where, line } of sourceLines()) {
      for (const match of line.matchAll(/docs\/([\w.-]+\.md)(?:#([\w-]+))?/g)) {
        const problem = brokenLink(
          path.join(repoRoot, 'docs', 'README.md'),
          `${match[1]}${match[2] ? `#${match[2]}` : ''}`,
        );
        if (problem) broken.push(`${where}: ${match[0]}: ${problem}`);
      }
      // "docs/decisions.md §6" and "docs/decisions.md §6 and §9" cite the numbered sections.
      const cited = /docs\/decisions\.md((?:,?\s*(?:and\s+)?§\d+)+)/.exec(line);
      for (const section of cited?.[1]?.matchAll(/§(\d+)/g) ?? []) {
        if (!sections.has(section[1]))
          broken.push(`${where}: docs/decisions.md §${section[1]} has no section`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('slugifies headings as GitHub does', () => {
    expect(slugify('4. STARTING → RUNNING')).toBe('4-starting--running');
    expect(slugify('13. Process tasks and the control plane')).toBe('13-process-tasks-and-the-control-plane');
    expect(slugify('The store (`@sluice/store`)')).toBe('the-store-sluicestore');
  });
});
