/**
 * Worker of {@linkcode probePluginImport}: imports the module it is sent
 * and answers `{ ok: true }` or `{ ok: false, message }`.
 *
 * @module
 */
/// <reference lib="deno.worker" />

self.onmessage = async (e: MessageEvent<string>) => {
  try {
    await import(e.data);
    self.postMessage({ ok: true });
  } catch (err) {
    self.postMessage({
      ok: false,
      message: String((err as Error)?.message ?? err).split("\n")[0],
    });
  }
};
