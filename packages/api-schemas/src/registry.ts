import { z } from 'zod';

/**
 * The public API's named schemas: each becomes `#/components/schemas/<id>` of
 * the OpenAPI document (src/openapi/document.ts). The same zod values parse
 * the requests (queries, bodies) and describe the responses.
 */
export const apiSchemas = z.registry<{ id: string; description?: string }>();

export function named<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  apiSchemas.add(schema, description === undefined ? { id } : { id, description });
  return schema;
}

/** Dates as JSON writes them (`Date#toJSON`): ISO 8601 in UTC with milliseconds. */
export const Timestamp = z.iso.datetime();
