-- Sync tasks (docs/connectors.md#sync): the committed state of a sync task and
-- its commit ledger, keyed by (workspace, namespace, flow_id, task_id) — a
-- connection is a flow with a schedule and a sync task, so that is the
-- connection's key.
--
-- sync_states: one row per stream for STREAM state (stream_namespace, '' when
-- the stream has none, and stream_name), one row with both '' for GLOBAL and
-- LEGACY state. `state` is the source's state object as text, kept as sent
-- (jsonb would reorder its keys). No foreign key: the state outlives the
-- executions that committed it (retention deletes those).
--
-- sync_commits: the ledger, one row per committed state, written in the same
-- statement as the state (src/sync/commit.ts). It goes with its task run.

-- CreateTable
CREATE TABLE "sync_states" (
    "workspace" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "flow_id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "stream_namespace" TEXT NOT NULL,
    "stream_name" TEXT NOT NULL,
    "state_type" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "execution_id" UUID NOT NULL,
    "task_run_id" UUID NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sync_states_pkey" PRIMARY KEY ("workspace","namespace","flow_id","task_id","stream_namespace","stream_name")
);

-- CreateTable
CREATE TABLE "sync_commits" (
    "id" BIGSERIAL NOT NULL,
    "workspace" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "flow_id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "execution_id" UUID NOT NULL,
    "task_run_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "sequence" INTEGER NOT NULL,
    "state_type" TEXT NOT NULL,
    "stream_namespace" TEXT NOT NULL,
    "stream_name" TEXT NOT NULL,
    "records" BIGINT NOT NULL,
    "bytes" BIGINT NOT NULL,
    "streams" JSONB NOT NULL,
    "committed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sync_commits_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "sync_commits_task_run_id_sequence_key" ON "sync_commits"("task_run_id", "sequence");

-- CreateIndex
CREATE INDEX "sync_commits_workspace_namespace_flow_id_task_id_id_idx" ON "sync_commits"("workspace", "namespace", "flow_id", "task_id", "id");

-- AddForeignKey
ALTER TABLE "sync_commits" ADD CONSTRAINT "sync_commits_task_run_id_fkey" FOREIGN KEY ("task_run_id") REFERENCES "task_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
