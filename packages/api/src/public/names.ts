import { HttpError } from '../http-errors';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Namespace, flow and secret names: one path segment of safe characters. */
export function checkName(kind: string, value: string): string {
  if (!NAME.test(value) || value.includes('..')) {
    throw new HttpError(
      400,
      'invalid_name',
      `${kind} "${value}" must be 1-128 letters, digits, '.', '_' or '-'`,
    );
  }
  return value;
}

/** A namespace file path: relative, '/'-separated, no '..', no empty segments. */
export function checkFilePath(segments: string[] | string): string {
  const parts = Array.isArray(segments) ? segments : segments.split('/');
  const path = parts.join('/');
  if (
    parts.length === 0 ||
    path.length > 512 ||
    parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\'))
  ) {
    throw new HttpError(
      400,
      'invalid_path',
      `file path "${path}" must be relative, without '.', '..' or empty segments`,
    );
  }
  return path;
}
