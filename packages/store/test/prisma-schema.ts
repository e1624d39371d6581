import { readFileSync } from 'node:fs';

/**
 * A small reader of schema.prisma, enough for the drift test: models, their
 * scalar fields, ids, unique constraints, indexes and relations. It reads only
 * the constructs this schema uses and fails loudly on a field it cannot place.
 */

export interface ScalarField {
  column: string;
  /** The PostgreSQL type Prisma creates, as information_schema spells it (udt_name). */
  udt: string;
  nullable: boolean;
  hasDefault: boolean;
}

export interface Relation {
  columns: string[];
  referencedTable: string;
  onDelete: string;
}

export interface Model {
  name: string;
  table: string;
  fields: ScalarField[];
  /** Index name → columns; unique ones separately. */
  primaryKey: string[];
  uniques: string[][];
  indexes: string[][];
  relations: Relation[];
}

const SCALARS: Record<string, string> = {
  String: 'text',
  Int: 'int4',
  BigInt: 'int8',
  Float: 'float8',
  Boolean: 'bool',
  DateTime: 'timestamp',
  Json: 'jsonb',
  Bytes: 'bytea',
};
const NATIVE: Record<string, string> = { Uuid: 'uuid', Timestamptz: 'timestamptz', Text: 'text' };

const listArg = (s: string): string[] =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

export function readPrismaModels(file: string): Model[] {
  const text = readFileSync(file, 'utf8');
  const blocks = [...text.matchAll(/^model (\w+) \{\n([\s\S]*?)^\}/gm)];
  const modelNames = new Set(blocks.map((b) => b[1]!));
  const tableOf = new Map<string, string>();
  const raw = blocks.map((b) => {
    const name = b[1]!;
    const lines = b[2]!
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('//'));
    const table = /@@map\("([^"]+)"\)/.exec(b[2]!)?.[1] ?? name;
    tableOf.set(name, table);
    return { name, table, lines };
  });

  return raw.map(({ name, table, lines }) => {
    const model: Model = { name, table, fields: [], primaryKey: [], uniques: [], indexes: [], relations: [] };
    const columnOf = new Map<string, string>();
    const pending: Array<{ fields: string[]; references: string; onDelete: string }> = [];
    for (const line of lines.filter((l) => !l.startsWith('@@'))) {
      const g = /^(?<field>\w+)\s+(?<type>\w+)(?<list>\[\])?(?<optional>\?)?\s*(?<attrs>.*)$/.exec(
        line,
      )?.groups;
      if (!g) throw new Error(`schema.prisma: cannot read field line in model ${name}: ${line}`);
      const { field, type, list, optional } = g;
      const attrs = g.attrs ?? '';
      if (modelNames.has(type!)) {
        const rel = /@relation\(fields: \[([^\]]+)\], references: \[([^\]]+)\](?:, onDelete: (\w+))?/.exec(
          attrs,
        );
        if (rel)
          pending.push({ fields: listArg(rel[1]!), references: type!, onDelete: rel[3] ?? 'NoAction' });
        continue;
      }
      const base = SCALARS[type!];
      if (!base) throw new Error(`schema.prisma: unknown type ${type} of ${name}.${field}`);
      const native = /@db\.(\w+)/.exec(attrs)?.[1];
      const udt = native ? NATIVE[native] : base;
      if (!udt) throw new Error(`schema.prisma: unknown native type @db.${native} of ${name}.${field}`);
      const column = /@map\("([^"]+)"\)/.exec(attrs)?.[1] ?? field!;
      columnOf.set(field!, column);
      model.fields.push({
        column,
        udt: list ? `_${udt}` : udt,
        // Prisma creates scalar lists without NOT NULL.
        nullable: Boolean(optional) || Boolean(list),
        hasDefault: attrs.includes('@default('),
      });
      if (/@id\b/.test(attrs)) model.primaryKey = [column];
      if (/@unique\b/.test(attrs)) model.uniques.push([column]);
    }
    const cols = (s: string) => listArg(s).map((f) => columnOf.get(f) ?? f);
    for (const line of lines.filter((l) => l.startsWith('@@'))) {
      const m = /^@@(id|unique|index)\(\[([^\]]+)\]/.exec(line);
      if (!m) continue;
      if (m[1] === 'id') model.primaryKey = cols(m[2]!);
      else if (m[1] === 'unique') model.uniques.push(cols(m[2]!));
      else model.indexes.push(cols(m[2]!));
    }
    model.relations = pending.map((p) => ({
      columns: p.fields.map((f) => columnOf.get(f) ?? f),
      referencedTable: tableOf.get(p.references)!,
      onDelete: p.onDelete,
    }));
    return model;
  });
}
