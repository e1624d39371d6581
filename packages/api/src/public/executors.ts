import { Router } from 'express';
import { listInstances } from '@sluice/store';
import type { PublicApiContext } from '../context';
import { requireUser } from '../user-auth';

export function executorRoutes(ctx: PublicApiContext): Router {
  const router = Router();

  // ListExecutors: instances that reported within PIPELINE_EXECUTOR_SILENCE_TIMEOUT; silent ones keep their row.
  router.get('/executors', async (_req, res) => {
    const rows = await listInstances(ctx.store, { seenWithinMs: ctx.executorSilenceTimeoutMs });
    res.json({
      executors: rows.map((r) => ({
        id: r.id,
        type: r.type,
        version: r.version,
        capacity: r.capacity,
        lastSeenAt: r.lastSeenAt,
      })),
    });
  });

  router.get('/instances', requireUser(ctx.jwtSecret, 'admin'), async (_req, res) => {
    const rows = await listInstances(ctx.store);
    const onlineSince = Date.now() - ctx.executorSilenceTimeoutMs;
    res.json({
      instances: rows.map((r) => ({
        id: r.id,
        type: r.type,
        version: r.version,
        capacity: r.capacity,
        pools: r.pools,
        executors: r.executors,
        resourceDefaults: r.resourceDefaults,
        registeredAt: r.registeredAt,
        lastSeenAt: r.lastSeenAt,
        online: r.lastSeenAt.getTime() >= onlineSince,
      })),
    });
  });

  return router;
}
