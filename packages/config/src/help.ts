import { varsFor, type AppName, type VarInfo } from './define';

/** The variables an app reads, formatted for `--help`. */
export function formatVarsHelp(app: AppName): string {
  return varsFor(app).map(formatVar).join('\n');
}

function formatVar(info: VarInfo): string {
  const aliases = info.aliases.length > 0 ? ` (or ${info.aliases.join(', ')})` : '';
  const fallback =
    info.default !== undefined ? ` [default: ${info.default === '' ? '""' : info.default}]` : '';
  const secret = info.secret ? ' [secret]' : '';
  return `  ${info.name}${aliases}${fallback}${secret}\n      ${info.description}`;
}
