-- Distributed mode: subflows, the scheduler's one-execution-per-due-time rule,
-- the transactional outbox and idempotent executor claims.

-- AlterTable
ALTER TABLE "executions" ADD COLUMN "inputs" JSONB,
ADD COLUMN "parent_task_run_id" UUID;

-- AlterTable
ALTER TABLE "task_runs" ADD COLUMN "waiting_on_execution_id" UUID;

-- CreateTable
CREATE TABLE "events" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "processed_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "executor_claims" (
    "instance_id" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "task_run_ids" UUID[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "executor_claims_pkey" PRIMARY KEY ("instance_id","idempotency_key")
);

-- CreateIndex
CREATE INDEX "executor_claims_created_at_idx" ON "executor_claims"("created_at");

-- CreateIndex
CREATE INDEX "executions_parent_task_run_id_idx" ON "executions"("parent_task_run_id");

-- CreateIndex
-- Retention looks up executions that ended before its cut-off.
CREATE INDEX "executions_ended_at_idx" ON "executions"("ended_at");

-- CreateIndex
-- NULLs are distinct: only scheduled executions (scheduled_for set) are unique per due time.
CREATE UNIQUE INDEX "executions_namespace_flow_id_scheduled_for_key" ON "executions"("namespace", "flow_id", "scheduled_for");

-- Not expressible in schema.prisma: consumers pick pending events oldest first
-- through this partial index, which stays as small as the backlog.
CREATE INDEX "events_pending_idx" ON "events" ("id") WHERE "processed_at" IS NULL;
