import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';

/** `tasks[1].executor.image` → ['tasks', 1, 'executor', 'image']. */
function segments(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  for (const part of path.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    out.push(part.startsWith('[') ? Number(part.slice(1, -1)) : part);
  }
  return out;
}

/**
 * The 1-based line of a validation issue in the YAML it is about: the line of
 * the deepest key or item of its dotted `path` the file has (a missing key
 * points at its parent). A YAML syntax error names its own line.
 */
export function mapIssueToLine(
  source: string,
  issue: { code: string; path: string; message: string },
): number {
  const stated = /\(line (\d+), column \d+\)/.exec(issue.message);
  if (stated) return Number(stated[1]);
  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, uniqueKeys: false });
  const lineOf = (offset: number | undefined) =>
    offset === undefined ? 1 : lineCounter.linePos(offset).line;
  let node: unknown = doc.contents;
  let line = lineOf((doc.contents as Node | null)?.range?.[0]);
  for (const segment of segments(issue.path)) {
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment),
      );
      if (!pair) break;
      line = lineOf((pair.key as Node).range?.[0]);
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as Node | undefined;
      if (!item) break;
      line = lineOf(item.range?.[0]);
      node = item;
    } else break;
  }
  return line;
}
