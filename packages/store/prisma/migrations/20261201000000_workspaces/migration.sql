-- Workspaces (docs/decisions.md §12): every namespace belongs to one workspace,
-- and a namespace name is resolved inside the caller's workspace, so `etl` of
-- one workspace and `etl` of another are two namespaces.
--
-- Model: a `workspace` column on every table keyed by namespace (flows,
-- namespace_files, secrets) and on executions, leading their keys. There is no
-- namespaces table: a namespace exists while something is stored in it, as
-- before. Task runs, logs, outputs, metrics and artifacts reach their
-- workspace through their execution, so the claim and every fenced write are
-- unchanged. Snapshots are content-addressed and only reached through an
-- execution; identical bundles stay shared.
--
-- Existing rows go to the workspace `default` (the ADD COLUMN default). The
-- default is dropped right after: every writer names the workspace, and a
-- forgotten one fails instead of landing in `default`. Adding a column with a
-- constant default does not rewrite the table; the rebuilt keys do.

-- AlterTable
ALTER TABLE "flows" ADD COLUMN "workspace" TEXT NOT NULL DEFAULT 'default';
ALTER TABLE "flows" ALTER COLUMN "workspace" DROP DEFAULT;
ALTER TABLE "flows" DROP CONSTRAINT "flows_pkey",
ADD CONSTRAINT "flows_pkey" PRIMARY KEY ("workspace", "namespace", "flow_id");

-- AlterTable
ALTER TABLE "namespace_files" ADD COLUMN "workspace" TEXT NOT NULL DEFAULT 'default';
ALTER TABLE "namespace_files" ALTER COLUMN "workspace" DROP DEFAULT;
ALTER TABLE "namespace_files" DROP CONSTRAINT "namespace_files_pkey",
ADD CONSTRAINT "namespace_files_pkey" PRIMARY KEY ("workspace", "namespace", "path");

-- AlterTable
ALTER TABLE "secrets" ADD COLUMN "workspace" TEXT NOT NULL DEFAULT 'default';
ALTER TABLE "secrets" ALTER COLUMN "workspace" DROP DEFAULT;
ALTER TABLE "secrets" DROP CONSTRAINT "secrets_pkey",
ADD CONSTRAINT "secrets_pkey" PRIMARY KEY ("workspace", "namespace", "name");

-- AlterTable
ALTER TABLE "executions" ADD COLUMN "workspace" TEXT NOT NULL DEFAULT 'default';
ALTER TABLE "executions" ALTER COLUMN "workspace" DROP DEFAULT;

-- The flow-keyed indexes of executions (concurrency, the scheduler's one
-- execution per due time) lead with the workspace like the flow's key.
DROP INDEX "executions_namespace_flow_id_state_idx";
DROP INDEX "executions_namespace_flow_id_scheduled_for_key";

-- CreateIndex
CREATE INDEX "executions_workspace_namespace_flow_id_state_idx" ON "executions"("workspace", "namespace", "flow_id", "state");

-- CreateIndex
-- NULLs are distinct: only scheduled executions (scheduled_for set) are unique per due time.
CREATE UNIQUE INDEX "executions_workspace_namespace_flow_id_scheduled_for_key" ON "executions"("workspace", "namespace", "flow_id", "scheduled_for");
