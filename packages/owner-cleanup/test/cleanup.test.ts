import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { containerExists, ensureBusyboxStaticImage, requireDocker } from '@sluice/testing';
import { runCleanup } from '../src';

/**
 * Cleanup against a real engine: containers labelled like the docker
 * executor's, a server answer per task run (isStillRunning), and only this
 * owner's containers touched.
 */

const OWNER = `clean-${randomBytes(3).toString('hex')}`;
const OTHER = `other-${randomBytes(3).toString('hex')}`;
let docker: Docker;
let image: string;

beforeAll(async () => {
  docker = await requireDocker();
  image = await ensureBusyboxStaticImage(docker);
}, 60_000);

afterAll(async () => {
  for (const owner of [OWNER, OTHER]) {
    const left = await docker.listContainers({ all: true, filters: { label: [`sluice.io/owner=${owner}`] } });
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true })));
  }
});

async function container(owner: string, taskRunId: string | null, running = true): Promise<string> {
  const labels: Record<string, string> = { 'sluice.io/owner': owner };
  if (taskRunId)
    Object.assign(labels, {
      'sluice.io/task-run': taskRunId,
      'sluice.io/attempt': '1',
      'sluice.io/fence': '4',
    });
  const created = await docker.createContainer({ Image: image, Entrypoint: ['sleep', '60'], Labels: labels });
  if (running) await created.start();
  return created.id;
}

const exists = (id: string) => containerExists(docker, id);

describe('runCleanup', () => {
  it("removes its own containers of ended and unknown task runs, adopts running ones, and leaves other owners' alone", async () => {
    const finished = await container(OWNER, 'tr-finished', false);
    const unknown = await container(OWNER, 'tr-unknown');
    const unlabelled = await container(OWNER, null);
    const running = await container(OWNER, 'tr-running');
    const foreign = await container(OTHER, 'tr-finished');
    const watched = await container(OWNER, 'tr-watched');
    const asked: string[] = [];
    const adopted: Docker.ContainerInfo[] = [];

    const result = await runCleanup({
      docker,
      ownerId: OWNER,
      protocol: {
        isStillRunning: async (id) => {
          asked.push(id);
          return id === 'tr-running' || id === 'tr-watched';
        },
      },
      adopt: (c) => void adopted.push(c),
      tracked: () => ['tr-watched'],
    });

    expect(result.removed.sort()).toEqual([finished, unknown, unlabelled].sort());
    expect(result.adopted).toEqual([running]);
    expect(result.kept).toEqual([watched]);
    expect(adopted.map((c) => c.Labels['sluice.io/task-run'])).toEqual(['tr-running']);
    expect(asked.sort()).toEqual(['tr-finished', 'tr-running', 'tr-unknown']);
    expect(await Promise.all([finished, unknown, unlabelled].map(exists))).toEqual([false, false, false]);
    expect(await Promise.all([running, foreign, watched].map(exists))).toEqual([true, true, true]);
  }, 60_000);

  it('keeps a container when the server cannot be asked', async () => {
    const id = await container(OWNER, 'tr-unreachable');
    const result = await runCleanup({
      docker,
      ownerId: OWNER,
      protocol: {
        isStillRunning: async () => {
          throw new Error('connect ECONNREFUSED');
        },
      },
      adopt: () => undefined,
    });
    expect(result.kept).toContain(id);
    expect(await exists(id)).toBe(true);
  }, 30_000);

  it('removes a runner-copy container a crash left behind, and keeps the one a copy is using', async () => {
    const copyOf = async () =>
      (
        await docker.createContainer({
          Image: image,
          Entrypoint: ['true'],
          Labels: { 'sluice.io/owner': OWNER, 'sluice.io/purpose': 'runner-copy' },
        })
      ).id;
    const leftover = await copyOf();
    const inUse = await copyOf();
    const result = await runCleanup({
      docker,
      ownerId: OWNER,
      protocol: { isStillRunning: async () => false },
      adopt: () => undefined,
      busy: () => [inUse],
    });
    expect(result.removed).toContain(leftover);
    expect(result.kept).toContain(inUse);
    expect(await Promise.all([leftover, inUse].map(exists))).toEqual([false, true]);
  }, 30_000);

  it("removes a sync attempt's volume once its task run is not running, and keeps those still in use, running or watched", async () => {
    const volume = async (owner: string, taskRunId: string) => {
      const name = `sluice-${taskRunId}-${randomBytes(3).toString('hex')}`;
      await docker.createVolume({
        Name: name,
        Labels: {
          'sluice.io/owner': owner,
          'sluice.io/task-run': taskRunId,
          'sluice.io/attempt': '1',
          'sluice.io/fence': '1',
        },
      });
      return name;
    };
    const ended = await volume(OWNER, 'tr-vol-ended');
    const running = await volume(OWNER, 'tr-vol-running');
    const watched = await volume(OWNER, 'tr-vol-watched');
    const foreign = await volume(OTHER, 'tr-vol-ended');
    const result = await runCleanup({
      docker,
      ownerId: OWNER,
      protocol: { isStillRunning: async (id) => id === 'tr-vol-running' },
      adopt: () => undefined,
      tracked: () => ['tr-vol-watched'],
    });
    expect(result.removedVolumes).toEqual([ended]);
    const present = async (name: string) =>
      docker
        .getVolume(name)
        .inspect()
        .then(() => true)
        .catch(() => false);
    expect(await Promise.all([ended, running, watched, foreign].map(present))).toEqual([
      false,
      true,
      true,
      true,
    ]);
    for (const name of [running, watched, foreign]) await docker.getVolume(name).remove();
  }, 30_000);
});
