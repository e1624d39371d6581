import type { ValidationIssue } from '@sluice/protocol';
import { didYouMean, ExecutionRefusedError, formatPath, issue } from './issues';
import type { InputDeclaration, InputType } from './types';
import { describe } from './zod-issues';

/*
 * Flow inputs (docs/flow-file.md#inputs): the values an execution is given,
 * checked against the flow's declaration, with the defaults filled in. A value
 * is of the declared type or its text ("5", "true", a JSON object's text),
 * which is what `sluice run --input name=value` and a rendered template send.
 */

export type Coerced = { ok: true; value: unknown } | { ok: false; message: string };

const NOUN: Record<InputType, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object (a mapping)',
};

// JSON's number grammar: "0x10", "1e", " 5" or "Infinity" are not numbers here.
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function fromText(type: InputType, text: string): unknown {
  if (type === 'number') return JSON_NUMBER.test(text) ? Number(text) : undefined;
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : undefined;
  if (type === 'object') {
    try {
      const parsed: unknown = JSON.parse(text);
      return isPlainObject(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  return text;
}

/** `value` as an input of `type`, or why it is not one. */
export function coerceInput(type: InputType, value: unknown): Coerced {
  const fits =
    type === 'string'
      ? typeof value === 'string'
      : type === 'number'
        ? typeof value === 'number' && Number.isFinite(value)
        : type === 'boolean'
          ? typeof value === 'boolean'
          : isPlainObject(value);
  if (fits) return { ok: true, value };
  const converted = typeof value === 'string' ? fromText(type, value) : undefined;
  if (converted !== undefined) return { ok: true, value: converted };
  return { ok: false, message: `expected ${NOUN[type]}, got ${describe(value)}` };
}

export type ResolvedInputs =
  { ok: true; inputs: Record<string, unknown> } | { ok: false; issues: ValidationIssue[] };

/**
 * The inputs an execution runs with: `given` checked against `declared`,
 * converted to the declared types, defaults filled in. Every problem at once,
 * each at `inputs.<name>`.
 */
export function resolveInputs(
  declared: Readonly<Record<string, InputDeclaration>> | undefined,
  given: Readonly<Record<string, unknown>> | null | undefined,
): ResolvedInputs {
  const declarations = declared ?? {};
  const values = given ?? {};
  const issues: ValidationIssue[] = [];
  const inputs: Record<string, unknown> = {};
  for (const [name, decl] of Object.entries(declarations)) {
    const path = formatPath(['inputs', name]);
    if (!Object.hasOwn(values, name) || values[name] === undefined) {
      if (decl.default !== undefined) inputs[name] = decl.default;
      else if (decl.required) {
        issues.push(issue('input_required', path, `input "${name}" (${NOUN[decl.type]}) is required`));
      }
      continue;
    }
    const coerced = coerceInput(decl.type, values[name]);
    if (coerced.ok) inputs[name] = coerced.value;
    else issues.push(issue('invalid_input_type', path, coerced.message));
  }
  const names = Object.keys(declarations);
  for (const name of Object.keys(values)) {
    if (Object.hasOwn(declarations, name)) continue;
    const known = names.length === 0 ? 'it declares none' : `it declares ${names.join(', ')}`;
    issues.push(
      issue(
        'unknown_input',
        formatPath(['inputs', name]),
        `the flow has no input "${name}"${didYouMean(name, names)}; ${known}`,
      ),
    );
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, inputs };
}

/**
 * An execution refused because its inputs do not match the flow's
 * declaration; nothing was created. The API answers 422 with the issues, and
 * a subflow task fails with the message.
 */
export class InputsInvalidError extends ExecutionRefusedError {
  constructor(namespace: string, flowId: string, issues: readonly ValidationIssue[]) {
    super(namespace, flowId, issues, `inputs of flow ${namespace}/${flowId}`);
    this.name = 'InputsInvalidError';
  }
}

/** resolveInputs, throwing InputsInvalidError on a problem. */
export function assertInputs(
  declared: Readonly<Record<string, InputDeclaration>> | undefined,
  given: Readonly<Record<string, unknown>> | null | undefined,
  namespace: string,
  flowId: string,
): Record<string, unknown> {
  const resolved = resolveInputs(declared, given);
  if (!resolved.ok) throw new InputsInvalidError(namespace, flowId, resolved.issues);
  return resolved.inputs;
}

/** An input as a template writes it: a string as is, anything else as its JSON text. */
export function inputText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Every declared input as template text: its value, or "" for an optional
 * input the execution was not given (and that has no default).
 */
export function templateInputs(
  declared: Readonly<Record<string, InputDeclaration>> | undefined,
  values: Readonly<Record<string, unknown>> | null | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(declared ?? {})) {
    const value = values && Object.hasOwn(values, name) ? values[name] : undefined;
    out[name] = value === undefined ? '' : inputText(value);
  }
  return out;
}

/**
 * Checks of a parsed `inputs:` block that need the declared type: a default of
 * that type (stored converted), no default on a required input, and no
 * required input on a scheduled flow (its executions have only the defaults).
 */
export function checkInputDeclarations(
  inputs: Record<string, InputDeclaration>,
  scheduled: boolean,
): { issues: ValidationIssue[]; inputs: Record<string, InputDeclaration> } {
  const issues: ValidationIssue[] = [];
  const out: Record<string, InputDeclaration> = {};
  for (const [name, decl] of Object.entries(inputs)) {
    const at = (field: string) => formatPath(['inputs', name, field]);
    out[name] = decl;
    if (decl.default !== undefined) {
      if (decl.required) {
        issues.push(
          issue(
            'invalid_value',
            at('default'),
            `input "${name}" is required, so it takes no default: drop "required: true" or the default`,
          ),
        );
      }
      const coerced = coerceInput(decl.type, decl.default);
      if (coerced.ok) out[name] = { ...decl, default: coerced.value };
      else {
        const quote =
          decl.type === 'string' && (typeof decl.default === 'number' || typeof decl.default === 'boolean')
            ? ' (quote it in YAML)'
            : '';
        issues.push(issue('invalid_input_type', at('default'), `the default ${coerced.message}${quote}`));
      }
    }
    if (scheduled && decl.required) {
      issues.push(
        issue(
          'scheduled_required_input',
          at('required'),
          `input "${name}" is required, but the flow has a schedule and scheduled executions have only the defaults: give it a default`,
        ),
      );
    }
  }
  return { issues, inputs: out };
}
