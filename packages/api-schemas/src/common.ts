import { z } from 'zod';
import { NAME_MAX_LENGTH } from '@sluice/flows';

export const MAX_PAGE_SIZE = 500;
export const DEFAULT_PAGE_SIZE = 50;

/** `limit` and `cursor` of every paged list (docs/api.md#pagination). */
export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .describe(`Page size, 1\u2013${MAX_PAGE_SIZE}.`),
  cursor: z
    .string()
    .max(1024)
    .optional()
    .describe('`nextCursor` of the previous page; opaque. Without it the list starts at its beginning.'),
});

/** The cursor of the next page, or null on the last page. */
export const NextCursor = z
  .string()
  .nullable()
  .describe('Pass as `cursor` for the next page; null when this page is the last.');

/** A namespace, flow or secret name; its rules are checked by nameProblem (400 invalid_name, docs/input-validation.md). */
export const Name = z.string().min(1).max(NAME_MAX_LENGTH);
