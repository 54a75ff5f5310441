/**
 * Small tmpfs mounts for the file-system faults (a full disk, a read-only
 * file system). Mounting needs root (CI runs `.ci/run` as root); elsewhere
 * {@linkcode tmpfs} returns the reason to skip.
 *
 * @module
 */

/** A mounted tmpfs. */
export interface Tmpfs extends AsyncDisposable {
  /** The mount point. */
  readonly dir: string;
  /** Remounts with options, e.g. `ro`, `rw`, `size=8m`. */
  remount(options: string): Promise<void>;
}

async function _sh(cmd: string, args: string[]): Promise<string | null> {
  try {
    const out = await new Deno.Command(cmd, {
      args,
      stdout: "null",
      stderr: "piped",
    }).output();
    return out.success ? null : new TextDecoder().decode(out.stderr).trim() ||
      `${cmd} exited with ${out.code}`;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Mounts a tmpfs of `size` (e.g. `1m`) on a fresh directory; returns it, or
 * the reason it cannot (not root, no mount permission).
 */
export async function tmpfs(size: string): Promise<Tmpfs | string> {
  if (Deno.build.os !== "linux") return "tmpfs mounts need Linux";
  if (Deno.uid() !== 0) {
    return "not root: mounting a tmpfs needs root (CI runs .ci/run as root)";
  }
  const dir = await Deno.makeTempDir({ prefix: "envsmith-tmpfs-" });
  const failed = await _sh("mount", [
    "-t",
    "tmpfs",
    "-o",
    `size=${size}`,
    "tmpfs",
    dir,
  ]);
  if (failed !== null) {
    await Deno.remove(dir, { recursive: true });
    return `cannot mount a tmpfs here: ${failed}`;
  }
  return {
    dir,
    async remount(options: string) {
      const err = await _sh("mount", ["-o", `remount,${options}`, dir]);
      if (err !== null) throw new Error(`remount ${options}: ${err}`);
    },
    async [Symbol.asyncDispose]() {
      await _sh("umount", ["-l", dir]);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
