import { z } from 'zod';
import { SelectableExecutorType } from './states';

export const Resources = z.object({ cpu: z.string().optional(), memory: z.string().optional() }).strict();
export type Resources = z.infer<typeof Resources>;

/** The executor block after the four-level merge: what a task run keeps and an executor receives. */
export const ResolvedExecutor = z.object({
  type: z.union([SelectableExecutorType, z.literal('inline')]),
  pool: z.string(),
  image: z.string().optional(),
  inject_runner: z.boolean().optional(),
  resources: Resources.optional(),
  pull: z.enum(['always', 'if_not_present', 'never']).optional(),
  node_selector: z.record(z.string(), z.string()).optional(),
  tolerations: z.array(z.record(z.string(), z.unknown())).optional(),
  service_account: z.string().optional(),
});
export type ResolvedExecutor = z.infer<typeof ResolvedExecutor>;
