import { formatPath, type PathSegment } from './issues';

/*
 * Templates in task fields: `{{ outputs.<task>.<key> }}` (whitespace inside the
 * braces is free) is replaced by the output `key` of the upstream task `task`,
 * `{{ inputs.<name> }}` by the execution's input `name` (docs/flow-file.md#inputs).
 * Nothing else is a template root. A literal `{{` (a Go template in a script,
 * `docker ps --format`) is written `\{{`; rendering turns it into `{{`.
 */

// One alternation, so an escaped `\{{` is consumed before it can start a template.
const TOKEN = /\\\{\{|\{\{([^{}]*)\}\}/g;
const OUTPUT_REF = /^outputs\.([a-zA-Z][a-zA-Z0-9_-]*)\.([A-Za-z0-9_][A-Za-z0-9_.-]*)$/;
const INPUT_REF = /^inputs\.([a-zA-Z][a-zA-Z0-9_-]*)$/;

export interface TemplateReference {
  task: string;
  key: string;
  /** Where the template sits inside the scanned value, e.g. `request.body.rows`. */
  path: string;
}

export interface TemplateOccurrence {
  /** The text between the braces, trimmed. */
  expression: string;
  /** Set when the expression is a well-formed output reference. */
  ref?: { task: string; key: string };
  /** Set when the expression is a well-formed input reference: the input's name. */
  input?: string;
  path: string;
  segments: PathSegment[];
}

export class TemplateError extends Error {
  constructor(
    message: string,
    readonly expression: string,
    readonly path: string,
    readonly task?: string,
    readonly key?: string,
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

interface ParsedExpression {
  expression: string;
  ref?: { task: string; key: string };
  input?: string;
}

function parseExpression(inner: string): ParsedExpression {
  const expression = inner.trim();
  const match = OUTPUT_REF.exec(expression);
  if (match) return { expression, ref: { task: match[1] as string, key: match[2] as string } };
  const input = INPUT_REF.exec(expression);
  return input ? { expression, input: input[1] as string } : { expression };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Calls `visit` for every string in a nested value of plain objects and arrays. */
function eachString(
  value: unknown,
  segments: PathSegment[],
  visit: (s: string, at: PathSegment[]) => void,
): void {
  if (typeof value === 'string') visit(value, segments);
  else if (Array.isArray(value)) value.forEach((item, i) => eachString(item, [...segments, i], visit));
  else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) eachString(item, [...segments, key], visit);
  }
}

/** Every `{{ ... }}` in the strings of `value`, well-formed or not (escaped ones excluded). */
export function findTemplates(value: unknown, base: PathSegment[] = []): TemplateOccurrence[] {
  const found: TemplateOccurrence[] = [];
  eachString(value, base, (text, segments) => {
    for (const match of text.matchAll(TOKEN)) {
      if (match[1] === undefined) continue; // an escaped \{{
      found.push({ ...parseExpression(match[1]), path: formatPath(segments), segments });
    }
  });
  return found;
}

/** The output references (`{{ outputs.<task>.<key> }}`) in the strings of `value`. */
export function templateReferences(value: unknown): TemplateReference[] {
  return findTemplates(value).flatMap((t) => (t.ref ? [{ ...t.ref, path: t.path }] : []));
}

export interface TemplateContext {
  /** Outputs of finished tasks: task id → key → value. */
  outputs: Record<string, Record<string, string>>;
  /** The execution's inputs as template text (templateInputs in inputs.ts): name → text. */
  inputs?: Record<string, string>;
}

function renderInput(whole: string, name: string, ctx: TemplateContext, path: string): string {
  const value = ctx.inputs && Object.hasOwn(ctx.inputs, name) ? ctx.inputs[name] : undefined;
  if (value === undefined) {
    throw new TemplateError(
      `${whole} at ${path || 'the value'}: the flow declares no input "${name}"`,
      `inputs.${name}`,
      path,
    );
  }
  return value;
}

function renderString(text: string, ctx: TemplateContext, segments: PathSegment[]): string {
  return text.replace(TOKEN, (whole, inner: string | undefined) => {
    if (inner === undefined) return '{{';
    const path = formatPath(segments);
    const { expression, ref, input } = parseExpression(inner);
    if (input !== undefined) return renderInput(whole, input, ctx, path);
    if (!ref) {
      throw new TemplateError(
        `${whole} at ${path || 'the value'}: only {{ outputs.<task>.<key> }} and {{ inputs.<name> }} can be rendered`,
        expression,
        path,
      );
    }
    // hasOwn: an output key such as `constructor` must not find Object.prototype members.
    const taskOutputs = Object.hasOwn(ctx.outputs, ref.task) ? ctx.outputs[ref.task] : undefined;
    const value = taskOutputs && Object.hasOwn(taskOutputs, ref.key) ? taskOutputs[ref.key] : undefined;
    if (value === undefined) {
      const why = taskOutputs
        ? `task "${ref.task}" has no output "${ref.key}"`
        : `task "${ref.task}" has no outputs`;
      throw new TemplateError(
        `${whole} at ${path || 'the value'}: ${why}`,
        expression,
        path,
        ref.task,
        ref.key,
      );
    }
    return value;
  });
}

function render(value: unknown, ctx: TemplateContext, segments: PathSegment[]): unknown {
  if (typeof value === 'string') return renderString(value, ctx, segments);
  if (Array.isArray(value)) return value.map((item, i) => render(item, ctx, [...segments, i]));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = render(item, ctx, [...segments, key]);
    return out;
  }
  return value;
}

/**
 * A copy of `value` with every template in its strings replaced. Values are
 * inserted as they are and not rendered again. Throws TemplateError naming
 * the task and key when an output is missing.
 */
export function renderTemplates<T>(value: T, ctx: TemplateContext): T {
  return render(value, ctx, []) as T;
}
