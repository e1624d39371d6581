/**
 * The one timeout rule of every engine probe (Docker ping, the kubernetes Job
 * dry run): false when the probe rejects or does not answer within
 * `timeoutMs`, so a slow or missing engine counts as "not answering".
 */
export async function answersWithin(probe: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      Promise.resolve()
        .then(probe)
        .catch(() => false),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** docs/decisions.md §5: the Docker API must answer a ping within 2 s. */
export const DOCKER_PING_TIMEOUT_MS = 2_000;
/** docs/decisions.md §5: the Job create dry run must succeed within 5 s. */
export const KUBERNETES_DRY_RUN_TIMEOUT_MS = 5_000;
