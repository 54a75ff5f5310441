/**
 * A plugin module is imported once in a worker first, within a time bound,
 * before it is imported for real: a module that loops or waits forever at
 * its top level would otherwise hang the command with no word.
 *
 * @module
 */

/** How long a plugin module may take to load. @default 30 s */
export const PLUGIN_LOAD_MS = 30_000;

/** What {@linkcode probePluginImport} found. */
export type ProbeOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly message: string }
  | { readonly ok: false; readonly timedOut: true };

/**
 * Imports `url` in a fresh worker and waits at most `timeoutMs` for it to
 * finish loading (the worker is terminated then, whatever it does).
 */
export async function probePluginImport(
  url: string,
  timeoutMs: number = PLUGIN_LOAD_MS,
): Promise<ProbeOutcome> {
  const worker = new Worker(
    new URL("./plugin_probe_worker.ts", import.meta.url),
    { type: "module" },
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await new Promise<ProbeOutcome>((resolve) => {
      timer = setTimeout(
        () => resolve({ ok: false, timedOut: true }),
        timeoutMs,
      );
      worker.onmessage = (e: MessageEvent<ProbeOutcome>) => resolve(e.data);
      worker.onerror = (e) => {
        e.preventDefault();
        resolve({ ok: false, message: e.message ?? String(e) });
      };
      worker.postMessage(url);
    });
  } finally {
    clearTimeout(timer);
    worker.terminate();
  }
}
