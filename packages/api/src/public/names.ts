import { filePathProblem, nameProblem } from '@sluice/flows';
import { HttpError } from '../http-errors';

/**
 * Namespace, flow and secret names. Express has percent-decoded the route
 * parameter already, so `..%2Fx` arrives as `../x` and is refused here
 * (rules: docs/input-validation.md).
 */
export function checkName(kind: string, value: string): string {
  const problem = nameProblem(kind, value);
  if (problem) throw new HttpError(400, problem.code, problem.message);
  return value;
}

/**
 * A namespace file path. Express decodes each `*path` segment on its own, so a
 * segment may itself hold an encoded '/' (`a%2F..%2Fx`): the segments are
 * joined first and the whole decoded path is checked.
 */
export function checkFilePath(segments: string[] | string): string {
  const path = Array.isArray(segments) ? segments.join('/') : segments;
  const problem = filePathProblem(path);
  if (problem) throw new HttpError(400, problem.code, problem.message);
  return path;
}
