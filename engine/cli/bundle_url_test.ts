import assert from "node:assert/strict";
import { join } from "node:path";
import { fetchBundle, isBundleUrl } from "./bundle_url.ts";
import { importBundle } from "../cache/bundle.ts";
import { Store } from "../cache/store.ts";
import { UserError } from "../errors.ts";
import { exportedRun } from "../_test_util.ts";

const YAML = `experiment: url
seed: 1
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
`;

Deno.test("a bundle named by URL is downloaded once into the cache and imports like the file; HTTP errors and unreachable hosts are one line", async () => {
  await using p = await exportedRun(YAML, "r.esc", { compact: true });
  const file = p.bundle;
  const bytes = Deno.readFileSync(file);
  let requests = 0;
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {} },
    (req) => {
      requests++;
      return new URL(req.url).pathname === "/r.esc"
        ? new Response(bytes)
        : new Response("no", { status: 404, statusText: "Not Found" });
    },
  );
  try {
    const base = `http://127.0.0.1:${server.addr.port}`;
    assert.ok(isBundleUrl(`${base}/r.esc`));
    assert.ok(!isBundleUrl("results/tables.esb.gz"));
    const other = new Store(join(p.dir, "other"));
    const local = await fetchBundle(`${base}/r.esc`, other.root);
    assert.deepEqual(Deno.readFileSync(local), bytes);
    const r = await importBundle(other, local);
    assert.equal(r.entries, 1);
    assert.deepEqual([...other.keys()], [...p.store.keys()]);
    // The second call uses the download.
    assert.equal(await fetchBundle(`${base}/r.esc`, other.root), local);
    assert.equal(requests, 1);

    await assert.rejects(
      () => fetchBundle(`${base}/gone.esc`, other.root),
      (e: Error) =>
        e instanceof UserError && !e.message.includes("\n") &&
        e.message.includes(`${base}/gone.esc`) &&
        /answered 404/.test(e.message),
    );
    await assert.rejects(
      () =>
        fetchBundle(`${base}/r.esc`, other.root, {
          maxBytes: 10,
          refresh: true,
        }),
      /larger than 10 bytes/,
    );
    // Nothing half-written is left behind.
    assert.deepEqual(
      [...Deno.readDirSync(join(other.root, "downloads"))].map((e) => e.name),
      [local.split("/").pop()],
    );
  } finally {
    await server.shutdown();
  }
  await assert.rejects(
    () => fetchBundle("http://127.0.0.1:9/r.esc", join(p.dir, "c3")),
    (e: Error) =>
      e instanceof UserError && !e.message.includes("\n") &&
      /cannot reach it/.test(e.message),
  );
});
