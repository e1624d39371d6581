// The self-contained runner's @sluice/runner/bundled (scripts/build-sea.cjs
// aliases it to this file). Node's SEA already starts from a code cache of
// the whole bundle, so the runner is imported statically here: a loader, or
// any dynamic import, would leave its functions out of that cache (measured:
// ≈20 ms slower to start).
import * as runner from '@sluice/runner';
import type { LoadedRunner } from '@sluice/runner/bundled';

export function loadRunner(): LoadedRunner {
  return { runner, from: 'modules' };
}
