import { APP_NAMES, formatVarsHelp, varsFor } from '../src';

describe('formatVarsHelp', () => {
  it.each(APP_NAMES)('lists every variable %s reads, with its default, and marks the secret ones', (app) => {
    const help = formatVarsHelp(app);
    for (const info of varsFor(app)) {
      const head = help
        .split('\n')
        .find((line) => line === `  ${info.name}` || line.startsWith(`  ${info.name} `));
      expect({ name: info.name, head: head !== undefined }).toEqual({ name: info.name, head: true });
      if (info.default !== undefined) expect(head).toContain(`[default: ${info.default || '""'}]`);
      expect(head!.includes('[secret]')).toBe(info.secret);
    }
  });

  it('keeps only the named variables when asked', () => {
    const help = formatVarsHelp('server', ['AUTH_JWT_SECRET']);
    expect(help).toMatch(/^ {2}AUTH_JWT_SECRET \[secret\]\n {6}\S/);
    expect(help).not.toContain('SLUICE_DATABASE_URL');
  });
});
