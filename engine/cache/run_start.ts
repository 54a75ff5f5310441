/**
 * The handshake that keeps `run` and `cache gc` apart. A run takes
 * `live/RUN.lock` before it plans (plans read which entries are
 * cached) and then checks that no gc holds `locks/gc.lock`; gc takes its
 * lock first and then looks for run locks whose manifest it cannot see.
 * Whichever comes second sees the other: a run waits for a gc that runs,
 * and gc waits (briefly) for a starting run's manifest, or refuses.
 *
 * @module
 */
import { join } from "node:path";
import { onDisk } from "../fs_errors.ts";
import { GC_LOCK, RUN_LOCK_DIR } from "./gc.ts";
import { type Lock, lockState, tryLock } from "./lock.ts";
import type { Store } from "./store.ts";

/** Options of {@linkcode announceRun}. */
export interface AnnounceOptions {
  /** Stops waiting (the lock is not taken). */
  readonly signal?: AbortSignal;
  /** Told once, in one line, when the run waits for a gc. */
  readonly onWait?: (line: string) => void;
  /** How often to look again. @default 200 */
  readonly pollMs?: number;
}

/**
 * Announces run `runId` to `cache gc` before it plans, waiting while a gc
 * runs on the cache. Release the returned lock when the run ends.
 *
 * @throws {DOMException} (AbortError) when `signal` aborts while waiting.
 */
export async function announceRun(
  store: Store,
  runId: string,
  note: string,
  options: AnnounceOptions = {},
): Promise<Lock> {
  let told = false;
  for (;;) {
    const dir = join(store.root, RUN_LOCK_DIR);
    const path = join(dir, `${runId}.lock`);
    const got = onDisk(path, "create the lock", () => {
      Deno.mkdirSync(dir, { recursive: true });
      return tryLock(path, note, { heartbeatMs: 30_000 });
    });
    if (!("release" in got)) {
      throw new Error(`run id ${runId} is in use (${got.note})`);
    }
    const gc = lockState(store.lockPath(GC_LOCK));
    if (gc.state !== "live" && gc.state !== "unknown") return got;
    got.release();
    if (!told) {
      told = true;
      options.onWait?.(
        `waiting for \`cache gc\`${
          gc.state === "live"
            ? ` (pid ${gc.holder.pid} on host ${gc.holder.host})`
            : ""
        } to finish before planning (lock ${store.lockPath(GC_LOCK)})`,
      );
    }
    options.signal?.throwIfAborted();
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, options.pollMs ?? 200);
      function done() {
        options.signal?.removeEventListener("abort", done);
        clearTimeout(t);
        resolve();
      }
      options.signal?.addEventListener("abort", done, { once: true });
    });
    options.signal?.throwIfAborted();
  }
}
