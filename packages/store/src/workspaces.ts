/**
 * A namespace as every store function addresses it: its name inside one
 * workspace. `etl` of workspace a and `etl` of workspace b are two namespaces
 * (docs/decisions.md §12); no query is keyed by the namespace name alone.
 */
export interface NamespaceKey {
  workspace: string;
  namespace: string;
}

/** The workspace that migration 20261201000000_workspaces gave every namespace that existed before it. */
export const DEFAULT_WORKSPACE = 'default';
