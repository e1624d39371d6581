import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ZodError } from 'zod';
import { StaleFenceError } from '@sluice/protocol';
import { AuthError } from '@sluice/auth';
import { ExecutorTypeNotAllowedError, FlowNotRunnableError } from '@sluice/flows';

/** An error with an HTTP status and a machine-readable code, safe to show to the caller. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function sendError(
  res: Parameters<RequestHandler>[1],
  status: number,
  code: string,
  message: string,
): void {
  res.status(status).json({ error: { code, message } });
}

function statusOf(err: unknown): number | null {
  const s = (err as { status?: unknown }).status;
  return typeof s === 'number' && s >= 400 && s < 600 ? s : null;
}

const CODE_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

export interface ErrorLog {
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Maps known errors to JSON error bodies; anything else is a 500 whose detail stays in the server log. */
export function errorHandler(log: ErrorLog): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    if (err instanceof HttpError) return sendError(res, err.status, err.code, err.message);
    if (err instanceof ZodError) {
      const message = err.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
      return sendError(res, 400, 'invalid_request', message);
    }
    if (err instanceof StaleFenceError) return sendError(res, 409, 'stale_fence', err.message);
    if (err instanceof AuthError) return sendError(res, 401, 'unauthorized', err.message);
    if (err instanceof ExecutorTypeNotAllowedError) return sendError(res, err.status, err.code, err.message);
    // The validator's shape, as a flow PUT answers it.
    if (err instanceof FlowNotRunnableError) return void res.status(err.status).json({ errors: err.issues });
    const status = statusOf(err);
    if (status && status < 500) {
      const code =
        (err as { type?: string }).type === 'entity.parse.failed'
          ? 'invalid_json'
          : (CODE_BY_STATUS[status] ?? 'error');
      return sendError(res, status, code, err instanceof Error ? err.message : 'request failed');
    }
    log.error('request failed', {
      method: req.method,
      path: req.path,
      error: err instanceof Error ? err.message : String(err),
    });
    return sendError(res, 500, 'internal', 'internal error');
  };
}
