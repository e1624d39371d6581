import { defineConfig } from 'prisma/config';

// No datasource URL here on purpose: migrations are applied by src/migrate.ts.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
