import type { ValidationIssue } from '@sluice/protocol';

/**
 * Every code the flow validator reports (the `code` of a 422 body entry).
 * Clients and tests rely on these strings; add to them, do not rename.
 */
export const CODES = {
  yaml_syntax: 'the file is not valid YAML; the message carries line and column',
  yaml_too_complex: 'YAML nested too deeply or with too many alias expansions (a resource-exhaustion guard)',
  required: 'a required field is missing',
  invalid_type: 'a field has the wrong type (string, number, list, mapping, ...)',
  invalid_value: 'a field has the right type but a value outside what it accepts',
  unknown_field: 'a field the format does not know (usually a typo)',
  unknown_task_type: 'a task `type` that is not command, script, http, subflow, connector or sync',
  duplicate_task_id: 'two tasks of one flow share an id',
  unknown_dependency: '`depends_on` names a task the flow does not have',
  dependency_cycle: 'tasks depend on each other in a loop; the message lists it',
  invalid_duration: 'not a duration such as 500ms, 10s, 30m, 2h, 1d or 1h30m (a bare number is seconds)',
  invalid_cron: 'not a 5-field (or 6-field, seconds first) cron expression',
  invalid_reference:
    'a template that is neither `{{ outputs.<task>.<key> }}` of an upstream task nor `{{ inputs.<name> }}` of a declared input',
  image_required: 'a docker or kubernetes executor (or a connector on one) without an image',
  field_not_allowed: 'an executor field that the merged executor type does not accept',
  executor_not_allowed: 'an executor block on a task that runs inline (http, subflow)',
  invalid_executor_type: 'an executor `type` other than process, docker or kubernetes',
  executor_type_not_allowed:
    'a task whose merged executor type is not in its namespace.yaml `allowed_executors` (refused when the flow is stored and when an execution starts)',
  input_required:
    'an execution (API, subflow) without a value for a required input; the path is `inputs.<name>`',
  invalid_input_type:
    'an input value, or an input `default` in the flow file, that is not of the declared type (nor its text)',
  unknown_input: 'an execution (API, subflow) is given an input its flow does not declare',
  scheduled_required_input:
    'a flow with a `schedule` declares a required input: scheduled executions have only the defaults',
} as const;

export type ValidationCode = keyof typeof CODES;

export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * `['tasks', 1, 'executor', 'image']` → `tasks[1].executor.image`. Keys that
 * would be ambiguous in dotted form (dots, spaces, ...) are quoted: `env["A.B"]`.
 */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** Path prefix of issues found in namespace.yaml (`namespace.yaml:defaults.executor.pull`). */
export const NAMESPACE_FILE = 'namespace.yaml';

export function namespacePath(segments: readonly PathSegment[]): string {
  return segments.length === 0 ? NAMESPACE_FILE : `${NAMESPACE_FILE}:${formatPath(segments)}`;
}

export function issue(code: ValidationCode, path: string, message: string): ValidationIssue {
  return { code, path, message };
}

/** Edit distance counting a swap of neighbours as one edit (`fecth` → `fetch`), for "did you mean" hints. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** ` (did you mean "depends_on"?)` when one known word is close enough to be the intended one. */
export function didYouMean(word: string, known: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  return best !== undefined && bestDistance <= limit ? ` (did you mean "${best}"?)` : '';
}

/** `"a", "b" or "c"` */
export function listWords(words: readonly string[]): string {
  const quoted = words.map((w) => `"${w}"`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

/**
 * An execution of `namespace/flowId` refused with the validator's issues;
 * nothing was created. The API answers 422 with the issues.
 */
export abstract class ExecutionRefusedError extends Error {
  readonly status = 422;

  constructor(
    readonly namespace: string,
    readonly flowId: string,
    readonly issues: readonly ValidationIssue[],
    what: string,
  ) {
    super(`${what}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  }
}
