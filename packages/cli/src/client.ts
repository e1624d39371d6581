import type { z } from 'zod';
import { ErrorBody, ValidationErrorBody } from '@sluice/api-schemas';
import { ApiError, CliError } from './errors';
import type { Connection } from './settings';

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  /** A JSON value, or raw bytes/text sent with `contentType`. */
  json?: unknown;
  raw?: { body: string | Buffer; contentType: string };
}

/**
 * The public API over fetch. Every JSON answer is checked against the schema
 * the server validates and documents with (@sluice/api-schemas), so a CLI
 * talking to a server of another version fails in one line, not half-way.
 */
export class ApiClient {
  constructor(private readonly connection: Connection) {}

  get server(): string {
    return this.connection.server;
  }

  async json<T extends z.ZodType>(
    method: string,
    path: string,
    schema: T,
    options: RequestOptions = {},
  ): Promise<z.output<T>> {
    const res = await this.send(method, path, options);
    return parseBody(schema, await readJson(res), `${method} ${path}`);
  }

  /** The response of a 2xx, body unread (a stream, or one whose status is the answer). */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const url = new URL(`${this.connection.server}/api/v1${path}`);
    for (const [key, value] of Object.entries(options.query ?? {}))
      if (value !== undefined) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { Authorization: `Bearer ${this.connection.token}` };
    let body: string | Buffer | undefined;
    if (options.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.raw) {
      headers['Content-Type'] = options.raw.contentType;
      body = options.raw.body;
    }
    let res: Response;
    try {
      res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach ${this.connection.server}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
      );
    }
    if (!res.ok) throw await apiError(res);
    return res;
  }
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`the server answered ${res.status} with a body that is not JSON`);
  }
}

export function parseBody<T extends z.ZodType>(schema: T, body: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new CliError(
    `unexpected answer to ${what}: ${issue.path.join('.') || '(body)'}: ${issue.message} (a server of another version?)`,
  );
}

/** `{"error":{code,message}}` or the validator's `{"errors":[...]}` as one ApiError. */
async function apiError(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return new ApiError(res.status, 'error', text.trim().split('\n')[0] || res.statusText);
  }
  const error = ErrorBody.safeParse(body);
  if (error.success) return new ApiError(res.status, error.data.error.code, error.data.error.message);
  const issues = ValidationErrorBody.safeParse(body);
  if (issues.success && issues.data.errors.length > 0) {
    const [first] = issues.data.errors;
    const more = issues.data.errors.length > 1 ? ` (and ${issues.data.errors.length - 1} more)` : '';
    return new ApiError(
      res.status,
      first!.code,
      `${first!.path ? `${first!.path}: ` : ''}${first!.message}${more}`,
    );
  }
  // A code the schema does not know yet (a newer server) still prints as the server sent it.
  const loose = body as { error?: { code?: unknown; message?: unknown } };
  if (typeof loose.error?.code === 'string')
    return new ApiError(res.status, loose.error.code, String(loose.error.message ?? ''));
  return new ApiError(res.status, 'error', res.statusText);
}
