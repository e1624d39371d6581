import type { Request } from 'express';
import type { z } from 'zod';
import { HttpError } from '../http-errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The route's query parsed by its schema (the one the OpenAPI document shows); 400 invalid_request otherwise. */
export function parseQuery<T extends z.ZodType>(schema: T, req: Request): z.output<T> {
  const parsed = schema.safeParse(req.query);
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues.map((i) => `${i.path.join('.') || '(query)'}: ${i.message}`).join('; ');
  throw new HttpError(400, 'invalid_request', message);
}

/**
 * Cursors are opaque to clients: base64url of the JSON of the last listed
 * object's sort key, so the next page continues after it (a keyset, stable
 * under inserts: docs/api.md#pagination).
 */
export function encodeCursor(key: readonly string[]): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

const badCursor = () =>
  new HttpError(400, 'invalid_cursor', 'cursor is not one this list returned; start without a cursor');

function decodeCursor(cursor: string, length: number): string[] {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(key) || key.length !== length || !key.every((k) => typeof k === 'string'))
    throw badCursor();
  return key as string[];
}

/** The name (flow id, file path, namespace) a page continues after. */
export function nameAfter(cursor: string | undefined): string | undefined {
  return cursor === undefined ? undefined : decodeCursor(cursor, 1)[0];
}

/** The execution key (created_at, id) a page continues after. */
export function executionAfter(cursor: string | undefined): { createdAt: Date; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const [at, id] = decodeCursor(cursor, 2) as [string, string];
  const createdAt = new Date(at);
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== at || !UUID.test(id))
    throw badCursor();
  return { createdAt, id };
}

/**
 * A page of `limit` from rows read with `limit + 1`: the extra row only says
 * there is a next page, whose cursor is the key of the page's last row.
 */
export function pageOf<T>(
  rows: T[],
  limit: number,
  keyOf: (row: T) => readonly string[],
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(keyOf(last)) : null };
}
