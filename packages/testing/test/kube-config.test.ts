import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeConfigFromEnv } from '@sluice/testing';

/** kubeConfigFromEnv reads the current context of a kubeconfig as kubectl writes one. */
describe('kubeConfigFromEnv', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-kubeconfig-'));
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is null without KUBECONFIG', () => {
    expect(kubeConfigFromEnv({})).toBeNull();
  });

  it("returns the current context's server, token and CA", () => {
    const file = join(dir, 'config');
    writeFileSync(join(dir, 'token'), 'file-token\n');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'clusters:',
        '- cluster:',
        '    insecure-skip-tls-verify: true',
        '    server: https://other:6443',
        '  name: other',
        '- cluster:',
        `    certificate-authority-data: ${Buffer.from(pem).toString('base64')}`,
        '    server: https://127.0.0.1:6443/',
        '  name: local',
        'contexts:',
        '- context: {cluster: other, user: other}',
        '  name: other',
        '- context:',
        '    cluster: local',
        '    user: "tester"',
        '  name: local',
        "current-context: 'local'",
        'kind: Config',
        'preferences: {}',
        'users:',
        '- name: tester # a comment',
        '  user:',
        '    tokenFile: token',
      ].join('\n'),
    );
    expect(kubeConfigFromEnv({ KUBECONFIG: `${file}:/elsewhere` })).toEqual({
      server: 'https://127.0.0.1:6443',
      token: 'file-token',
      caData: pem,
    });
  });
});
