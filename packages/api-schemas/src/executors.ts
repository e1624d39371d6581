import { z } from 'zod';
import { ExecutorType } from '@sluice/protocol';
import { named, Timestamp } from './registry';

const Capacity = z
  .record(z.string(), z.number().int().nullable())
  .describe('Slots per executor type; null = unlimited.');

export const ExecutorList = named(
  'ExecutorList',
  z.object({
    executors: z.array(
      z.object({
        id: z.string(),
        type: z.string(),
        version: z.string(),
        capacity: Capacity,
        lastSeenAt: Timestamp,
      }),
    ),
  }),
  'Instances that reported within PIPELINE_EXECUTOR_SILENCE_TIMEOUT.',
);

export const InstanceList = named(
  'InstanceList',
  z.object({
    instances: z.array(
      z.object({
        id: z.string(),
        type: z.string(),
        version: z.string(),
        capacity: Capacity,
        pools: z.array(z.string()),
        executors: z.array(ExecutorType),
        resourceDefaults: z.record(z.string(), z.string()),
        registeredAt: Timestamp,
        lastSeenAt: Timestamp,
        online: z.boolean(),
      }),
    ),
  }),
  'Every registered instance, silent ones too.',
);
