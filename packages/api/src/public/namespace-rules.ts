import type { Response } from 'express';
import { isDeepStrictEqual } from 'node:util';
import { parseNamespaceConfig } from '@sluice/flows';
import { getNamespaceFile, type NamespaceKey, type Store } from '@sluice/store';
import { HttpError } from '../http-errors';
import { currentUser } from '../user-auth';

async function allowedExecutors(content: Buffer | null): Promise<unknown> {
  if (!content) return undefined;
  const parsed = parseNamespaceConfig(content.toString('utf8'));
  return parsed.ok ? parsed.config.allowed_executors : undefined;
}

/**
 * namespace.yaml `allowed_executors` is the admin's rule for the namespace
 * (docs/decisions.md §13): a member may edit the file's defaults, but a write
 * or delete that changes the rule needs the admin role.
 */
export async function checkNamespaceRuleChange(
  store: Store,
  res: Response,
  namespace: NamespaceKey,
  next: Buffer | null,
): Promise<void> {
  if (currentUser(res).role === 'admin') return;
  const before = await allowedExecutors(await getNamespaceFile(store, namespace, 'namespace.yaml'));
  if (!isDeepStrictEqual(before, await allowedExecutors(next))) {
    throw new HttpError(
      403,
      'forbidden',
      'changing allowed_executors in namespace.yaml needs the admin role',
    );
  }
}
