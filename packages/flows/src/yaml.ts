import { parseDocument, type YAMLError } from 'yaml';
import type { ValidationIssue } from '@sluice/protocol';
import { issue } from './issues';

export type YamlResult = { ok: true; value: unknown } | { ok: false; errors: ValidationIssue[] };

function syntaxMessage(error: YAMLError): string {
  // prettyErrors appends " at line L, column C:" and a source excerpt; keep the first sentence and restate the position.
  const text = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? error.message;
  const start = error.linePos?.[0];
  const where = start ? ` (line ${start.line}, column ${start.col})` : '';
  // By far the most common slip: an unquoted cron schedule, whose `*` YAML reads as an alias.
  const hint = /alias/i.test(text) ? '; quote values that start with "*", such as a cron schedule' : '';
  return `${text}${where}${hint}`;
}

/**
 * Parses one YAML document (YAML 1.2 core schema, `<<` merge keys allowed).
 * Syntax errors, duplicate keys, multiple documents and unresolvable aliases
 * all become `yaml_syntax` issues at `path`. An empty file is an empty mapping.
 */
export function loadYaml(text: string, path = ''): YamlResult {
  const doc = parseDocument(text, { prettyErrors: true, merge: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return { ok: false, errors: doc.errors.map((e) => issue('yaml_syntax', path, syntaxMessage(e))) };
  }
  try {
    // maxAliasCount bounds alias expansion ("billion laughs"); the library throws past it.
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    return { ok: true, value: value ?? {} };
  } catch (error) {
    return { ok: false, errors: [issue('yaml_syntax', path, (error as Error).message)] };
  }
}
