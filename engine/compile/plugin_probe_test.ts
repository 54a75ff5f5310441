import { scaledMs } from "../_test_util.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { UserError } from "../errors.ts";
import { loadPlugins } from "./plugins.ts";
import { probePluginImport } from "./plugin_probe.ts";
import { toFileUrl } from "../paths.ts";

async function withModules(
  files: Record<string, string>,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-plugin-" });
  try {
    for (const [name, text] of Object.entries(files)) {
      await Deno.writeTextFile(join(dir, name), text);
    }
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const options = (dir: string) => ({
  from: "exp.yaml: plugins",
  baseDir: dir,
  kinds: [],
  executors: [],
  loadTimeoutMs: 1500,
});

Deno.test("plugins: a module that loops or waits forever at import is refused in one line within its bound", async () => {
  await withModules({
    "loop.ts": "while (true) { /* forever */ }\nexport const kinds = [];\n",
    "wait.ts": "await new Promise(() => {});\nexport const kinds = [];\n",
  }, async (dir) => {
    for (const m of ["./loop.ts", "./wait.ts"]) {
      const t0 = performance.now();
      await assert.rejects(
        () => loadPlugins([m], options(dir)),
        (e: unknown) => {
          assert.ok(e instanceof UserError);
          assert.equal(
            e.message,
            `exp.yaml: plugins ${m}: the module did not finish loading within 1.5 s (a loop or an endless wait at its top level?); fix the module: registering kinds must not wait for anything`,
          );
          return true;
        },
      );
      const ms = performance.now() - t0;
      assert.ok(ms >= 1400 && ms < scaledMs(15_000), `${m}: ${ms} ms`);
    }
  });
});

Deno.test("plugins: a module that throws at import is refused with its message; a good one loads once probed", async () => {
  await withModules({
    "throw.ts": 'throw new RangeError("boom at import");\n',
    "good.ts": "export const answer = 42;\n",
  }, async (dir) => {
    await assert.rejects(
      () =>
        loadPlugins(["./throw.ts"], { ...options(dir), loadTimeoutMs: 30_000 }),
      /plugins \.\/throw\.ts: the module does not load: .*boom at import; fix the module/,
    );
    assert.deepEqual(
      await probePluginImport(toFileUrl(join(dir, "good.ts")), 30_000),
      { ok: true },
    );
  });
});
