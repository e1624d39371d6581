import { z } from 'zod';
import type { InputType } from '../types';
import { TASK_ID_PATTERN } from './fields';

/** Input names follow the task id rule: they appear in `{{ inputs.<name> }}` and in `--input name=value`. */
export const INPUT_NAME_PATTERN = TASK_ID_PATTERN;

export const INPUT_TYPES = ['string', 'number', 'boolean', 'object'] as const satisfies readonly InputType[];

const InputName = z
  .string()
  .regex(INPUT_NAME_PATTERN, 'an input name starts with a letter and has only letters, digits, "_" and "-"');

/*
 * The shape of one declaration; the default's type, `required` with a default
 * and `schedule` with a required input are checked in ../inputs.ts, where the
 * declared type is known.
 */
export const InputDeclarationSchema = z.strictObject({
  type: z.enum(INPUT_TYPES),
  required: z.boolean().default(false),
  default: z.unknown().optional(),
  description: z.string().optional(),
});

/** `inputs:` of a flow file: a mapping of input name → declaration. */
export const InputsSchema = z.record(InputName, InputDeclarationSchema);
