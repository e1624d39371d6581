import { execFile } from 'node:child_process';
import { chmod, lstat, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { syncVolumeLayout } from '@sluice/protocol';

/**
 * `sluice runner-install DIR --sync-layout SYNC`: the kubernetes init container of a sync lays
 * out the pod's sync emptyDir (docs/connectors.md#sync-on-kubernetes) — the same layout the
 * docker executor uploads (syncVolumeLayout). Node.js has no mkfifo and the runner image holds
 * nothing but the runner, so the FIFOs come from the tiny static program below, written into
 * the directory, run once and removed. It is x86-64 only, as the injected runner's loader is.
 *
 * Its source (`as` + a hand-made one-segment ELF header, 198 bytes): for each argument,
 * mknodat(AT_FDCWD, arg, S_IFIFO | 0666, 0); exit 0, or the first failure's errno.
 *
 *     mov rbx, [rsp]; lea r12, [rsp+16]; dec rbx
 *   1: test rbx, rbx; jz 2f
 *     mov rdi, -100; mov rsi, [r12]; mov edx, 0x11b6; xor r10d, r10d; mov eax, 259; syscall
 *     test rax, rax; js 3f; add r12, 8; dec rbx; jmp 1b
 *   2: xor edi, edi; mov eax, 60; syscall
 *   3: neg rax; mov edi, eax; mov eax, 60; syscall
 */
const MKFIFO_X86_64 = Buffer.from(
  '7f454c4602010100000000000000000002003e000100000078004000000000004000000000000000000000000000' +
    '0000000000004000380001000000000000000100000005000000000000000000000000004000000000000000400000' +
    '000000c600000000000000c6000000000000000010000000000000488b1c244c8d64241048ffcb4885db742848c7c7' +
    '9cffffff498b3424bab61100004531d2b8030100000f054885c078124983c40848ffcbebd331ffb83c0000000f0548' +
    'f7d889c7b83c0000000f05',
  'hex',
);

const HELPER = '.sluice-mkfifo';

async function isFifo(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isFIFO();
  } catch {
    return false;
  }
}

/** Creates the layout in `dir` (which exists: the emptyDir); what is already there is kept (a rerun). */
export async function createSyncLayout(dir: string): Promise<void> {
  const layout = syncVolumeLayout();
  const fifos: string[] = [];
  for (const entry of layout) {
    const path = join(dir, entry.path);
    if (entry.type === 'directory') await mkdir(path, { recursive: true });
    else if (!(await isFifo(path))) fifos.push(path);
  }
  if (fifos.length > 0) await makeFifos(dir, fifos);
  // chmod, not the create modes: the umask would narrow them.
  for (const entry of layout) await chmod(join(dir, entry.path), entry.mode);
}

async function makeFifos(dir: string, paths: string[]): Promise<void> {
  if (process.arch !== 'x64') {
    throw new Error(`creating the sync FIFOs needs x86-64 (this is ${process.arch})`);
  }
  const helper = join(dir, HELPER);
  await writeFile(helper, MKFIFO_X86_64, { mode: 0o700 });
  try {
    await promisify(execFile)(helper, paths);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new Error(
      `creating the sync FIFOs in ${dir} failed (${typeof code === 'number' ? `errno ${code}` : String(code)}): ${(err as Error).message}`,
    );
  } finally {
    await rm(helper, { force: true });
  }
}
