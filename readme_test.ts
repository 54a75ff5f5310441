import assert from "node:assert/strict";
import {
  compileExperiment,
  EXPERIMENT_KEYS,
  TABLE_KEYS,
} from "@envsmith/engine/compile";
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

Deno.test("docs/experiments.md documents every top-level key and every table key", () => {
  const doc = Deno.readTextFileSync(
    new URL("./docs/experiments.md", import.meta.url),
  );
  for (const key of EXPERIMENT_KEYS) {
    assert.ok(doc.includes(`| \`${key}\``), `top-level key ${key}`);
  }
  for (const key of TABLE_KEYS) {
    assert.match(
      doc,
      new RegExp(`^[\\s-]+${key}:`, "m"),
      `table key ${key}`,
    );
  }
});

Deno.test("README is a guide: at most about 250 lines, linking every reference page in docs/", () => {
  assert.ok(readme.split("\n").length <= 260, "README is short");
  const pages = [...Deno.readDirSync(new URL("./docs/", import.meta.url))]
    .filter((e) => e.name.endsWith(".md")).map((e) => e.name).sort();
  assert.ok(pages.length >= 7, pages.join(", "));
  for (const page of pages) {
    assert.ok(readme.includes(`](docs/${page})`), `README links docs/${page}`);
  }
});

Deno.test("CI runs the README's test command", () => {
  const ci = Deno.readTextFileSync(new URL("./.ci/run", import.meta.url));
  assert.match(ci, /deno task test/);
});

Deno.test("the README's annotated experiment is valid with the registered kinds", () => {
  const start = readme.indexOf("## An experiment, annotated");
  assert.ok(start > 0, "## An experiment, annotated");
  const m = /```yaml\n([\s\S]*?)```/.exec(readme.slice(start));
  assert.ok(m, "an example yaml block under ## An experiment, annotated");
  const exp = compileExperiment("README.md#example", m[1]!, {
    kinds: allKinds,
  });
  assert.equal(exp.name, "ablate-context");
  assert.ok(exp.byId.has("score[context=full,seed=3]"));
  assert.equal(exp.tables[0]!.name, "ablation");
});
