-- The public API's lists (docs/api.md#pagination): executions newest first,
-- of a workspace, of one of its namespaces, or of one flow, paged by the key
-- (created_at, id). Each list reads its index backwards from the cursor and
-- stops at the page size; the namespace list also walks the namespace index
-- one namespace at a time (src/namespaces/list.ts).

-- CreateIndex
CREATE INDEX "executions_workspace_created_at_id_idx" ON "executions"("workspace", "created_at", "id");

-- CreateIndex
CREATE INDEX "executions_workspace_namespace_created_at_id_idx" ON "executions"("workspace", "namespace", "created_at", "id");

-- CreateIndex
CREATE INDEX "executions_workspace_namespace_flow_id_created_at_id_idx" ON "executions"("workspace", "namespace", "flow_id", "created_at", "id");
