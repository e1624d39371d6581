import { Lexer, Parser, parseDocument, type YAMLError } from 'yaml';
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

/** Deepest nesting of collections accepted; real flow files stay under a dozen levels. */
export const MAX_YAML_DEPTH = 100;
/** Alias expansions accepted per document ("billion laughs" needs millions). */
export const MAX_YAML_ALIASES = 100;

/**
 * The nesting depth first seen over `limit`, or null. Runs the library's own
 * lexer and parser, which keep an explicit stack, so it stops early without
 * recursing; the composer (used by parseDocument) recurses per level and
 * would exhaust the call stack on a 10 000-deep `[[[…]]]`.
 */
function tooDeep(text: string, limit: number): boolean {
  const parser = new Parser();
  for (const lexeme of new Lexer().lex(text)) {
    for (const _token of parser.next(lexeme)) {
      // Tokens of finished documents: not needed, only the stack is.
    }
    // The stack holds the document and each open collection.
    if (parser.stack.length - 1 > limit) return true;
  }
  return false;
}

/**
 * Parses one YAML document (YAML 1.2 core schema, `<<` merge keys allowed).
 * Syntax errors, duplicate keys, multiple documents and unresolvable aliases
 * all become `yaml_syntax` issues at `path`; nesting deeper than
 * MAX_YAML_DEPTH or more than MAX_YAML_ALIASES alias expansions is
 * `yaml_too_complex`. An empty file is an empty mapping.
 */
export function loadYaml(text: string, path = ''): YamlResult {
  if (tooDeep(text, MAX_YAML_DEPTH)) {
    return {
      ok: false,
      errors: [issue('yaml_too_complex', path, `nested more than ${MAX_YAML_DEPTH} levels deep`)],
    };
  }
  const doc = parseDocument(text, { prettyErrors: true, merge: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return { ok: false, errors: doc.errors.map((e) => issue('yaml_syntax', path, syntaxMessage(e))) };
  }
  try {
    // maxAliasCount bounds alias expansion ("billion laughs"); the library throws past it.
    const value: unknown = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
    return { ok: true, value: value ?? {} };
  } catch (error) {
    const message = (error as Error).message;
    if (/alias count/i.test(message)) {
      const why = `its aliases expand past the limit of ${MAX_YAML_ALIASES}`;
      return { ok: false, errors: [issue('yaml_too_complex', path, why)] };
    }
    if (error instanceof RangeError) {
      return { ok: false, errors: [issue('yaml_too_complex', path, 'nested too deeply to read')] };
    }
    return { ok: false, errors: [issue('yaml_syntax', path, message)] };
  }
}
