import type { Resources } from '@sluice/protocol';

/** CPU and memory as the Engine API takes them; absent fields mean "no limit". */
export interface ContainerLimits {
  NanoCpus?: number;
  Memory?: number;
}

const MEMORY_UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/** `0.5`, `2` or `500m` → nano-CPUs. Throws naming `field` for anything else. */
export function parseCpu(value: string, field: string): number {
  const match = /^(\d+(?:\.\d+)?)(m?)$/.exec(value.trim());
  const amount = match ? Number(match[1]) / (match[2] === 'm' ? 1000 : 1) : NaN;
  if (!(amount > 0)) throw new Error(`${field}: expected a CPU amount such as 0.5, 2 or 500m, got ${value}`);
  return Math.round(amount * 1e9);
}

/** `256Mi`, `1Gi`, `512M` or bytes → bytes. Throws naming `field` for anything else. */
export function parseMemory(value: string, field: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|K|M|G|T)?$/.exec(value.trim());
  const unit = MEMORY_UNITS[match?.[2] ?? ''];
  const bytes = match && unit !== undefined ? Math.floor(Number(match[1]) * unit) : NaN;
  if (!(bytes > 0))
    throw new Error(`${field}: expected a memory amount such as 256Mi, 1Gi or 512M, got ${value}`);
  return bytes;
}

/** The task's `resources`, else PIPELINE_RUNTIME_DEFAULT_CPU / _MEMORY, field by field. */
export function containerLimits(resources: Resources | undefined, defaults: Resources): ContainerLimits {
  const limits: ContainerLimits = {};
  if (resources?.cpu) limits.NanoCpus = parseCpu(resources.cpu, 'executor.resources.cpu');
  else if (defaults.cpu) limits.NanoCpus = parseCpu(defaults.cpu, 'PIPELINE_RUNTIME_DEFAULT_CPU');
  if (resources?.memory) limits.Memory = parseMemory(resources.memory, 'executor.resources.memory');
  else if (defaults.memory) limits.Memory = parseMemory(defaults.memory, 'PIPELINE_RUNTIME_DEFAULT_MEMORY');
  return limits;
}
