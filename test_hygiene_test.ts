/**
 * Rules every test file keeps: a wall-clock bound scales with the machine's
 * load (`scaledMs`, engine/testdata/load.ts), and a test ignored on a
 * condition says why in its name (`[ignored: ...]` / `[skipped: ...]`), so
 * the reporter prints the reason.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { projectFiles } from "./_test_util.ts";

const ROOT = fileURLToPath(new URL("./", import.meta.url));

/** Every test file of the project (relative paths). */
function testFiles(): string[] {
  return projectFiles((name) => name.endsWith("_test.ts"));
}

/** An assertion that a duration is below a literal number of milliseconds. */
const UNSCALED =
  /assert\.ok\([^;]*(?:performance\.now\(\)|Date\.now\(\)|\bms\b|\btook\b)[^;]*<\s*\d[\d_]*\s*[,)]/;

Deno.test("test hygiene: wall-clock bounds in tests scale with the load (scaledMs)", () => {
  const bad: string[] = [];
  for (const f of testFiles()) {
    if (f === "test_hygiene_test.ts") continue;
    Deno.readTextFileSync(join(ROOT, f)).split("\n").forEach((line, i) => {
      if (UNSCALED.test(line)) bad.push(`${f}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(bad, [], "wrap the bound in scaledMs(...)");
  assert.match("assert.ok(performance.now() - t0 < 5000);", UNSCALED);
  assert.doesNotMatch(
    "assert.ok(performance.now() - t0 < scaledMs(5000));",
    UNSCALED,
  );
});

Deno.test("test hygiene: a test ignored on a condition names the reason in its name", () => {
  const bad: string[] = [];
  for (const f of testFiles()) {
    const lines = Deno.readTextFileSync(join(ROOT, f)).split("\n");
    lines.forEach((line, i) => {
      const m = /^\s*ignore:\s*(.+?),?\s*(\/\/.*)?$/.exec(line);
      if (!m || m[1] === "true" || m[1] === "false") return;
      // the test's name, in the lines above (a template or a constant)
      const above = lines.slice(Math.max(0, i - 8), i).join("\n");
      if (!/ignored:|skipped:|\bIGNORED\b|\bTAG\b/.test(above)) {
        bad.push(`${f}:${i + 1}`);
      }
    });
  }
  assert.deepEqual(
    bad,
    [],
    'put the reason in the name: `name: "..." + (cond ? " [ignored: why; the fix]" : "")`',
  );
});
