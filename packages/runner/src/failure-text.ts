/** Room left in a result's error (the API takes 8192 characters) for the connector's last log lines. */
const ERROR_MAX_CHARS = 8000;
const LOG_LINE_MAX_CHARS = 400;

/**
 * A failed connector task's or sync's error: `why`, then as many of the newest log lines as fit
 * (the newest matter most; each cut to 400 characters), all masked.
 */
export function failureText(why: string, logs: readonly string[], mask: (text: string) => string): string {
  let error = mask(why);
  if (logs.length === 0) return error.slice(0, ERROR_MAX_CHARS);
  error = `${error.slice(0, ERROR_MAX_CHARS / 2)}\nlast log lines:`;
  const lines: string[] = [];
  let room = ERROR_MAX_CHARS - error.length;
  for (const raw of [...logs].reverse()) {
    const masked = mask(raw);
    const line = masked.length > LOG_LINE_MAX_CHARS ? `${masked.slice(0, LOG_LINE_MAX_CHARS)}…` : masked;
    if (line.length + 1 > room) break;
    lines.unshift(line);
    room -= line.length + 1;
  }
  return [error, ...lines].join('\n');
}
