import { createHash } from 'node:crypto';
import express, { Router } from 'express';
import { parseNamespaceConfig } from '@sluice/flows';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { checkFilePath, checkName } from './names';

const rawBody = express.raw({ type: () => true, limit: '10mb' });

export function fileRoutes(ctx: PublicApiContext): Router {
  const router = Router();

  router.put('/namespaces/:ns/files/*path', rawBody, async (req, res) => {
    const namespace = checkName('namespace', String(req.params.ns));
    const path = checkFilePath(req.params.path as unknown as string[]);
    const content: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (path === 'namespace.yaml') {
      const parsed = parseNamespaceConfig(content.toString('utf8'));
      if (!parsed.ok) return void res.status(422).json({ errors: parsed.errors });
    }
    const sha256 = createHash('sha256').update(content).digest('hex');
    const data = { content: new Uint8Array(content), sha256, updatedAt: new Date() };
    await ctx.prisma.namespaceFile.upsert({
      where: { namespace_path: { namespace, path } },
      create: { namespace, path, ...data },
      update: data,
    });
    res.json({ namespace, path, size: content.length, sha256 });
  });

  router.get('/namespaces/:ns/files', async (req, res) => {
    const namespace = checkName('namespace', String(req.params.ns));
    const rows = await ctx.pool.query<{ path: string; sha256: string; size: number; updated_at: Date }>(
      'SELECT path, sha256, octet_length(content) AS size, updated_at FROM namespace_files WHERE namespace = $1 ORDER BY path',
      [namespace],
    );
    res.json({
      files: rows.rows.map((r) => ({
        path: r.path,
        sha256: r.sha256,
        size: Number(r.size),
        updatedAt: r.updated_at,
      })),
    });
  });

  router.get('/namespaces/:ns/files/*path', async (req, res) => {
    const namespace = checkName('namespace', String(req.params.ns));
    const path = checkFilePath(req.params.path as unknown as string[]);
    const file = await ctx.prisma.namespaceFile.findUnique({
      where: { namespace_path: { namespace, path } },
    });
    if (!file) throw new HttpError(404, 'not_found', `file ${namespace}/${path} not found`);
    res.type('application/octet-stream').send(Buffer.from(file.content));
  });

  router.delete('/namespaces/:ns/files/*path', async (req, res) => {
    const namespace = checkName('namespace', String(req.params.ns));
    const path = checkFilePath(req.params.path as unknown as string[]);
    const r = await ctx.prisma.namespaceFile.deleteMany({ where: { namespace, path } });
    if (r.count === 0) throw new HttpError(404, 'not_found', `file ${namespace}/${path} not found`);
    res.status(204).end();
  });

  return router;
}
