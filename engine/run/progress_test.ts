import assert from "node:assert/strict";
import { formatDuration, PlainReporter, TtyReporter } from "./progress.ts";
import { onTestClock } from "../_test_util.ts";

Deno.test("formatDuration", () => {
  assert.equal(formatDuration(850), "850ms");
  assert.equal(formatDuration(12_340), "12.3s");
  assert.equal(formatDuration(184_000), "3m04s");
  assert.equal(formatDuration(3_720_000), "1h02m");
});

Deno.test("plain reporter: timestamped lines, throttled progress with ETA", () => {
  const { r, out, clock } = onTestClock(
    Date.UTC(2026, 0, 1, 12, 0, 0),
    (io) => new PlainReporter({ ...io, intervalMs: 10_000 }),
  );
  r.start("train[seed=1]");
  r.progress("train[seed=1]", 0, 100, "success 0.10");
  clock.ms += 5_000;
  r.progress("train[seed=1]", 10, 100, "success 0.20"); // within the interval: not printed
  clock.ms += 6_000;
  r.progress("train[seed=1]", 20, 100, "success 0.30");
  r.waiting("eval", "pid 12@host");
  clock.ms += 1_000;
  r.end("train[seed=1]", "done", 12_000);
  r.end("bad", "failed", 5, "boom");
  assert.deepEqual(out, [
    "[12:00:00] start train[seed=1]\n",
    "[12:00:11]       train[seed=1]  20/100  success 0.30  11.0s ETA 44.0s\n",
    "[12:00:12] done  train[seed=1] (12.0s)\n",
    "[12:00:12] FAIL  bad after 5ms: boom\n",
  ]);
});

Deno.test("tty reporter: one live line per running node, redrawn in place", async () => {
  const { r, out, clock } = onTestClock(
    0,
    (io) => new TtyReporter({ ...io, color: true }),
  );
  r.start("a");
  r.start("b");
  clock.ms = 1000;
  r.progress("a", 5, 10, "note");
  for (let i = 0; i < 200 && !out.join("").includes("▸ b"); i++) {
    await new Promise((res) => setTimeout(res, 10));
  }
  const frame = out.join("");
  assert.match(frame, /▸ a {2}5\/10 {2}note {2}1\.0s/);
  assert.match(frame, /▸ b {2}1\.0s/);
  out.length = 0;
  r.end("a", "done", 1000);
  // Clears the 2 live lines, prints the permanent line, redraws the remaining one.
  assert.equal(out[0], "\x1b[2F\x1b[J\x1b[32m✓\x1b[0m a (1.0s)\n▸ b  1.0s\n");
  r.close();
  assert.equal(out.at(-1), "\x1b[1F\x1b[J");
});
