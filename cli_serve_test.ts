// `serve:` of the llm engineer through `plan`: mistakes are refused before
// anything runs (exit 2, one line naming the node and the field), and the
// redesign's key follows the served model's bytes, never a port.
import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "./cli.ts";
import { SilentReporter } from "@envsmith/engine/run";
import { writeRandomGguf } from "./llm/random_gguf.ts";

async function plan(dir: string, engineer: string) {
  const file = join(dir, "exp.yaml");
  await Deno.writeTextFile(
    file,
    `experiment: served\nseed: 1\nnodes:\n  config: { kind: redesign, with: { engineer: ${engineer}, config: { preset: easy } } }\n`,
  );
  const out: string[] = [], err: string[] = [];
  const code = await main(
    ["--cache", join(dir, "cache"), "plan", file, "--json"],
    {
      reporter: new SilentReporter(),
      output: { out: (l) => out.push(l), err: (l) => err.push(l) },
    },
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const keyOf = (out: string): string =>
  (JSON.parse(out) as { nodes: { id: string; key: string }[] }).nodes
    .find((n) => n.id === "config")!.key;

Deno.test("cli plan: serve mistakes exit 2 in one line; the key follows the GGUF's bytes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-cli-serve-" });
  try {
    await writeRandomGguf(join(dir, "a.gguf"), { seed: 1 });
    const refused: [string, RegExp][] = [
      [
        "{ name: llm, serve: { gguf: a.gguf }, llm: { base_url: 'http://127.0.0.1:8000/v1', model: m } }",
        /^config: engineer\.llm\.base_url: serve starts the server, so llm names none; remove llm\.base_url/,
      ],
      [
        "{ name: llm, serve: { command: [envsmith-no-such-server, --port, '{port}'] } }",
        /^config: engineer\.serve\.command: "envsmith-no-such-server" is not on PATH; install it, or give its full path$/,
      ],
      [
        "{ name: llm, serve: { command: [sh, '{model}', '{port}'], model: ckpt } }",
        /^config: engineer\.serve\.model: ckpt does not exist/,
      ],
    ];
    for (const [engineer, message] of refused) {
      const r = await plan(dir, engineer);
      assert.equal(r.code, 2, r.err);
      assert.equal(r.err.split("\n").length, 1, r.err);
      assert.match(r.err, message);
    }
    const served = "{ name: llm, serve: { gguf: a.gguf, threads: 1 } }";
    const first = await plan(dir, served);
    assert.equal(first.code, 0, first.err);
    const again = await plan(dir, served);
    assert.equal(keyOf(again.out), keyOf(first.out));
    await writeRandomGguf(join(dir, "a.gguf"), { seed: 2 });
    const changed = await plan(dir, served);
    assert.notEqual(keyOf(changed.out), keyOf(first.out));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
