/**
 * Checks of the names and paths a route carries, applied to the value AFTER
 * percent-decoding (`..%2Fx` is `../x` by then). Each returns null when the
 * value is fine, else a code and a message naming the problem, for a 400.
 */
export interface InputProblem {
  code: 'invalid_name' | 'invalid_path';
  message: string;
}

/** Namespace, flow and secret names: one path segment of safe characters. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const NAME_MAX_LENGTH = 128;
/** A namespace file path, in UTF-8 bytes: every path of up to 512 characters fits. */
export const FILE_PATH_MAX_BYTES = 2048;
/** One segment of a file path, in UTF-8 bytes: what Linux file systems accept (NAME_MAX). */
export const FILE_SEGMENT_MAX_BYTES = 255;

// C0 controls (NUL included), DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** `kind` is what the value names, for the message: "namespace", "flow", "secret". */
export function nameProblem(kind: string, value: string): InputProblem | null {
  const why = nameFault(value);
  return why ? { code: 'invalid_name', message: `${kind} name ${quote(value)} ${why}` } : null;
}

function nameFault(value: string): string | null {
  if (value.length === 0) return 'is empty';
  if (value.length > NAME_MAX_LENGTH) return `is longer than ${NAME_MAX_LENGTH} characters`;
  if (CONTROL.test(value)) return 'contains a control character';
  if (value.includes('/') || value.includes('\\')) return "contains a '/' or '\\'";
  if (value.includes('..')) return "contains '..'";
  if (!NAME_PATTERN.test(value)) {
    return "must start with a letter or digit and have only letters, digits, '.', '_' and '-'";
  }
  return null;
}

/** A namespace file path: relative, '/'-separated, no '.', '..' or empty segment. */
export function filePathProblem(path: string): InputProblem | null {
  const why = filePathFault(path);
  return why ? { code: 'invalid_path', message: `file path ${quote(path)} ${why}` } : null;
}

function filePathFault(path: string): string | null {
  if (path.length === 0) return 'is empty';
  const bytes = utf8Length(path);
  if (bytes > FILE_PATH_MAX_BYTES) return `is ${bytes} bytes, over the limit of ${FILE_PATH_MAX_BYTES}`;
  const control = CONTROL.exec(path);
  if (control) return `contains a control character at position ${control.index + 1}`;
  if (path.startsWith('/')) return "is absolute; give it relative to the namespace, without a leading '/'";
  if (path.includes('\\')) return "contains '\\'; separate directories with '/'";
  const segments = path.split('/');
  if (segments.includes('..')) return "has a '..' segment";
  if (segments.includes('.')) return "has a '.' segment";
  if (segments.includes('')) return "has an empty segment ('//' or a trailing '/')";
  const long = segments.find((s) => utf8Length(s) > FILE_SEGMENT_MAX_BYTES);
  if (long !== undefined) return `has a segment longer than ${FILE_SEGMENT_MAX_BYTES} bytes`;
  return null;
}

const encoder = new TextEncoder();
const utf8Length = (text: string): number => encoder.encode(text).length;

/** The value as JSON (control characters escaped), shortened so a huge one does not fill the message. */
function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}
