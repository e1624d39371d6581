import { z } from 'zod';
import { Name, NextCursor } from './common';
import { ValidationIssue } from './errors';
import { named, Timestamp } from './registry';

export const NamespaceList = named(
  'NamespaceList',
  z.object({ namespaces: z.array(z.object({ name: z.string() })), nextCursor: NextCursor }),
  'The namespaces of the caller\u2019s workspace that hold a flow, file, secret or execution, by name.',
);

export const Flow = named(
  'Flow',
  z.object({
    namespace: z.string(),
    id: z.string(),
    source: z.string().describe('The YAML as it was stored.'),
    definition: z.record(z.string(), z.unknown()).describe('The validated flow (docs/flow-file.md).'),
    updatedAt: Timestamp,
  }),
);

export const FlowList = named(
  'FlowList',
  z.object({
    flows: z.array(
      z.object({
        id: z.string(),
        schedule: z.string().nullable(),
        connection: z.boolean().describe('The flow of a connection (written through /connections).'),
        updatedAt: Timestamp,
      }),
    ),
    nextCursor: NextCursor,
  }),
  'The flows of a namespace, by id.',
);

export const FileWritten = named(
  'FileWritten',
  z.object({ namespace: z.string(), path: z.string(), size: z.number().int(), sha256: z.string() }),
);

export const FileList = named(
  'FileList',
  z.object({
    files: z.array(
      z.object({ path: z.string(), sha256: z.string(), size: z.number().int(), updatedAt: Timestamp }),
    ),
    nextCursor: NextCursor,
  }),
  'The files of a namespace without their content, by path.',
);

export const SecretBody = named(
  'SecretValue',
  z
    .object({
      value: z
        .string()
        .min(1)
        .max(64 * 1024),
    })
    .strict(),
);

export const SecretList = named(
  'SecretList',
  z.object({ secrets: z.array(z.object({ name: z.string(), updatedAt: Timestamp })) }),
  'Names only: no call of the public API returns a secret value.',
);

/** At most this many flows in one validation request (a namespace folder of `sluice apply`). */
export const MAX_VALIDATED_FLOWS = 1000;

export const NamespaceValidationRequest = named(
  'NamespaceValidationRequest',
  z
    .object({
      namespaceYaml: z
        .string()
        .optional()
        .describe('The namespace.yaml the flows are checked against; without it the stored one (or none).'),
      flows: z
        .array(z.object({ id: Name, source: z.string().describe('The flow YAML.') }).strict())
        .max(MAX_VALIDATED_FLOWS),
    })
    .strict(),
  'A namespace folder to check: its namespace.yaml and flows, validated as PUT would, nothing stored.',
);

export const NamespaceValidation = named(
  'NamespaceValidation',
  z.object({
    valid: z.boolean().describe('No problem anywhere: every PUT of these files would pass validation.'),
    namespaceYaml: z.array(ValidationIssue).describe('The problems of namespace.yaml.'),
    flows: z
      .array(z.object({ id: z.string(), errors: z.array(ValidationIssue) }))
      .describe('Every flow of the request, in its order, with its problems (none when valid).'),
  }),
);
