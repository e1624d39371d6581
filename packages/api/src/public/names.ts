import type { Request, Response } from 'express';
import { filePathProblem, nameProblem } from '@sluice/flows';
import type { NamespaceKey } from '@sluice/store';
import { HttpError } from '../http-errors';
import { currentUser } from '../user-auth';

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

/**
 * The route's `:ns` as the caller's namespace: that name inside the caller's
 * workspace (docs/decisions.md §12), so another workspace's namespace of the
 * same name is never reached.
 */
export function callerNamespace(req: Request, res: Response): NamespaceKey {
  const namespace = checkName('namespace', String(req.params.ns));
  return { workspace: currentUser(res).workspace, namespace };
}
