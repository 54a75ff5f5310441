import assert from "node:assert/strict";
import {
  compileExperiment,
  EXPERIMENT_KEYS,
  TABLE_KEYS,
} from "@envsmith/engine";
import { allKinds } from "./mod.ts";

const readme = Deno.readTextFileSync(new URL("./README.md", import.meta.url));
const config = JSON.parse(
  Deno.readTextFileSync(new URL("./deno.json", import.meta.url)),
) as { denoVersion: string };

Deno.test("README pins the same Deno version as deno.json", () => {
  const m = /^deno@(\d+\.\d+\.\d+)$/.exec(config.denoVersion);
  assert.ok(
    m,
    `deno.json denoVersion "${config.denoVersion}" is not deno@X.Y.Z`,
  );
  const version = m[1]!;
  assert.ok(
    readme.includes(`npx --yes deno@${version} task ablate`),
    "README: npx ablate command",
  );
  assert.ok(
    readme.includes(`npx --yes deno@${version} task test`),
    "README: npx test command",
  );
  const pinned = [...readme.matchAll(/deno@(\d+\.\d+\.\d+)/g)].map((x) => x[1]);
  assert.deepEqual(
    [...new Set(pinned)],
    [version],
    "every pinned version in the README",
  );
  assert.ok(readme.includes(`With Deno ${version} installed`));
});

Deno.test("README documents every top-level key and every table key", () => {
  for (const key of EXPERIMENT_KEYS) {
    assert.ok(readme.includes(`| \`${key}\``), `top-level key ${key}`);
  }
  for (const key of TABLE_KEYS) {
    assert.match(
      readme,
      new RegExp(`^[\\s-]+${key}:`, "m"),
      `table key ${key}`,
    );
  }
});

Deno.test("CI runs the README's test command", () => {
  const ci = Deno.readTextFileSync(new URL("./.ci/run", import.meta.url));
  assert.match(ci, /deno task test/);
});

Deno.test("the README's example experiment is valid with the registered kinds", () => {
  const start = readme.indexOf("## Experiment files");
  const m = /```yaml\n([\s\S]*?)```/.exec(readme.slice(start));
  assert.ok(m, "an example yaml block under ## Experiment files");
  const exp = compileExperiment("README.md#example", m[1]!, {
    kinds: allKinds,
  });
  assert.equal(exp.name, "ablate-context");
  assert.ok(exp.byId.has("score[context=full,seed=3]"));
  assert.equal(exp.tables[0]!.name, "ablation");
});
