/**
 * `tables` on a fresh clone: every shipped experiment with the shipped
 * bundles, into an empty cache, printed from the shipped tables memo
 * (`results/tables.tables.json.gz`) against the import path (the same
 * bundles and comparison memos copied to a directory without the tables
 * memo). Reports user, sys and wall seconds (from /usr/bin/time) per call,
 * checks that both print the same stdout byte for byte, and says whether
 * the memo was used (it is not when a bundle or the tables code changed
 * since `tables --memo-out` wrote it).
 *
 * ```sh
 * nice -n 5 deno run -A bench/fastclone_bench.ts [ROUNDS]
 * ```
 *
 * @module
 */
import { basename, join } from "node:path";
import { existsSync } from "node:fs";
import { SHIPPED_BUNDLES } from "../nodes/project_paths.ts";

const rounds = Number(Deno.args[0] ?? 1);
const here = new URL("..", import.meta.url).pathname;
const tmp = Deno.makeTempDirSync({ prefix: "fastclone-bench-" });
const plain = join(tmp, "plain");
Deno.mkdirSync(plain);
for (const b of SHIPPED_BUNDLES) {
  for (const f of [b, b.replace(/\.esb\.gz$/, ".memo.json.gz")]) {
    const from = join(here, f);
    if (existsSync(from)) Deno.linkSync(from, join(plain, basename(f)));
  }
}

/** One `tables` call into an empty cache: its stdout, stderr and times. */
function call(bundles: readonly string[], n: number) {
  const cache = join(tmp, `cache-${n}`);
  const args = ["-f", "%U %S %e", "deno", "run", "-A", "cli.ts", "tables"];
  for (const b of bundles) args.push("--import", b);
  args.push("--out", join(tmp, `out-${n}`));
  const out = new Deno.Command("/usr/bin/time", {
    args,
    cwd: here,
    env: { ENVSMITH_CACHE: cache },
  }).outputSync();
  const err = new TextDecoder().decode(out.stderr).trimEnd().split("\n");
  const [user, sys, wall] = err.at(-1)!.split(" ").map(Number);
  // the memo path writes no cache at all
  if (existsSync(cache)) Deno.removeSync(cache, { recursive: true });
  return {
    stdout: new TextDecoder().decode(out.stdout),
    stderr: err.slice(0, -1).join("\n"),
    user: user!,
    sys: sys!,
    wall: wall!,
  };
}

const rows: string[] = [];
let n = 0, same = true;
for (let r = 0; r < rounds; r++) {
  const memo = call(SHIPPED_BUNDLES, n++);
  const full = call(SHIPPED_BUNDLES.map((b) => join(plain, basename(b))), n++);
  same &&= memo.stdout === full.stdout;
  const used = /printed from .* without importing/.test(memo.stderr);
  for (
    const [name, x] of [
      [used ? "shipped tables memo" : "memo NOT used (stale)", memo],
      ["import path", full],
    ] as const
  ) {
    rows.push(
      `| ${name} | ${x.user.toFixed(2)} | ${x.sys.toFixed(2)} | ${
        (x.user + x.sys).toFixed(1)
      } | ${x.wall.toFixed(1)} |`,
    );
  }
}
console.log("| call | user s | sys s | CPU s | wall s |");
console.log("| --- | --- | --- | --- | --- |");
for (const r of rows) console.log(r);
console.log(
  same ? "stdout byte-equal in every round" : "STDOUT DIFFERS between paths",
);
Deno.removeSync(tmp, { recursive: true });
