import { existsSync, readFileSync } from 'node:fs';
import { createRequire, wrap } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import type * as Runner from './index';

// `sluice exec` starts once per process task run (and for every standby), so
// its start-up is pickup latency. Loaded module by module from dist, the
// runner spends ≈200 ms resolving and compiling ≈1 MB of JavaScript (zod is
// three quarters of it) before it does anything. The build therefore also
// writes the runner as one bundle (dist/exec/runner.cjs) plus V8's code cache
// for it (runner.cjs.cache, made by the same Node.js): loading that skips
// resolution and most compilation. This module must stay light: it is what
// the apps' `exec` imports first. Nothing here is required for correctness —
// without a bundle, or with a cache V8 rejects (another Node.js build), the
// runner loads as before or compiles without the cache.

/** Where the build writes the runner's bundle and its code cache. */
export const RUNNER_BUNDLE_DIR = join(__dirname, 'exec');
export const RUNNER_BUNDLE_FILE = 'runner.cjs';
export const RUNNER_CODE_CACHE_SUFFIX = '.cache';

export interface LoadedRunner {
  runner: typeof Runner;
  /** How it was loaded: from the bundle with its code cache, the bundle alone, or the modules in dist. */
  from: 'bundle+cache' | 'bundle' | 'modules';
}

/** The runner's exports: from the bundle when the build made one, else from this package's modules. */
export function loadRunner(dir: string = RUNNER_BUNDLE_DIR): LoadedRunner {
  const file = join(dir, RUNNER_BUNDLE_FILE);
  if (!existsSync(file)) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the fallback is the package itself, loaded on demand
    return { runner: require('./index') as typeof Runner, from: 'modules' };
  }
  const cachedData = readIfPresent(file + RUNNER_CODE_CACHE_SUFFIX);
  // Not destructured as `exports`: that name is this CommonJS module's own.
  const { exports: runner, script } = runBundle(file, cachedData);
  return {
    runner: runner as typeof Runner,
    from: cachedData && !script.cachedDataRejected ? 'bundle+cache' : 'bundle',
  };
}

/**
 * Compiles and runs a CommonJS bundle as Node would load it, with `cachedData`
 * as V8's code cache when given. The build makes the cache from the returned
 * script once the bundle has run (scripts/build-exec-bundle.cjs).
 */
export function runBundle(file: string, cachedData?: Buffer): { exports: unknown; script: Script } {
  const script = new Script(wrap(readFileSync(file, 'utf8')), { filename: file, cachedData });
  const moduleWrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string,
  ) => void;
  const module = { exports: {} as unknown };
  moduleWrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return { exports: module.exports, script };
}

function readIfPresent(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}
