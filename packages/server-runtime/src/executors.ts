import type { ServerConfig } from '@sluice/config';
import { InlineExecutor, ProcessExecutor, type Executor } from '@sluice/executors';

/**
 * The embedded instance's executors. Inline is always on; `auto` turns on
 * process (and, once the docker executor lands, docker when the engine
 * answers). An explicit list turns on exactly those plus inline.
 */
export function standaloneExecutors(config: ServerConfig, runnerCommand: string[]): Executor[] {
  const selection = config.instance.executors;
  const wanted = selection === 'auto' ? ['inline', 'process'] : [...new Set(['inline', ...selection])];
  const unavailable = wanted.filter((t) => t !== 'inline' && t !== 'process');
  if (unavailable.length > 0) {
    throw new Error(
      `SLUICE_EXECUTORS: ${unavailable.join(', ')} cannot run in this build yet (inline and process can); ` +
        'remove them from the list or use auto',
    );
  }
  const executors: Executor[] = [new InlineExecutor()];
  if (wanted.includes('process')) executors.push(new ProcessExecutor({ runnerCommand }));
  return executors;
}
