import { z } from 'zod';

/** Every non-validation error body of every Sluice API. */
export const ApiError = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
export type ApiError = z.infer<typeof ApiError>;

/** A 422 body: one entry per problem, `path` in dotted form (`tasks[1].executor.image`). */
export const ValidationIssue = z.object({ code: z.string(), path: z.string(), message: z.string() });
export type ValidationIssue = z.infer<typeof ValidationIssue>;
export const ValidationErrorBody = z.object({ errors: z.array(ValidationIssue) });
export type ValidationErrorBody = z.infer<typeof ValidationErrorBody>;
