import { varsFor, type AppName, type VarInfo } from './define';

/**
 * The variables an app reads, formatted for `--help`: name (and aliases),
 * default, `[secret]` for values never printed, and the description. `only`
 * keeps the named ones (a command that reads a few of its app's variables).
 */
export function formatVarsHelp(app: AppName, only?: readonly string[]): string {
  const vars = varsFor(app).filter((info) => only === undefined || only.includes(info.name));
  return vars.map(formatVar).join('\n');
}

function formatVar(info: VarInfo): string {
  const aliases = info.aliases.length > 0 ? ` (or ${info.aliases.join(', ')})` : '';
  const fallback =
    info.default !== undefined ? ` [default: ${info.default === '' ? '""' : info.default}]` : '';
  const secret = info.secret ? ' [secret]' : '';
  return `  ${info.name}${aliases}${fallback}${secret}\n      ${info.description}`;
}
