// What an execution pins at creation; stored by @sluice/store, so its type lives there.
export type { ExecutionDefinition } from '@sluice/store';
