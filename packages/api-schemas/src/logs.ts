import { z } from 'zod';

const MAX_LINES_PER_PAGE = 10_000;

const wholeNumber = z.coerce.number().int().min(0, { error: 'must be a whole number \u2265 0' });

/** GET /task-runs/{id}/logs */
export const LogsQuery = z.object({
  after: wholeNumber.default(0).describe('Only lines with a `seq` above this (0 = from the start).'),
  limit: wholeNumber
    .default(1000)
    .transform((n) => Math.min(n, MAX_LINES_PER_PAGE))
    .describe(`At most this many lines (above ${MAX_LINES_PER_PAGE} reads as ${MAX_LINES_PER_PAGE}).`),
  follow: z
    .string()
    .optional()
    .describe('`true` (or `1`): stream the lines as newline-delimited JSON until the task run has ended.'),
});
