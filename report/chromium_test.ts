/**
 * The report as a user gets it after a clone: built in a fresh cache from a
 * results bundle like the shipped one (JSON only, plus the trajectories the
 * failure cases need), rendered by headless Chromium at 1280 and 800 px,
 * with no error text on the page. Skipped where Chromium is not installed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { builtinKinds, SilentReporter } from "@envsmith/engine/run";
import {
  cacheExportCommand,
  type CommandContext,
  runCommand,
} from "@envsmith/engine/cli";
import { kinds as domainKinds } from "../nodes/mod.ts";
import { runReport } from "./command.ts";
import { CHROMIUM, HEADLESS_FLAGS } from "./_test_util.ts";

const HAVE_CHROMIUM = (() => {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
})();

// Two seeds, two contexts, two stages, the last redesign trained on, a
// held-out evaluation of every stage: the shape of the shipped experiments.
const YAML = `
experiment: clone-test
seed: 5
matrix:
  context: [none, full]
  seed: [1, 2]
nodes:
  bench: { kind: generate, with: { suites: [base, crowded], split: test, per_suite: 6 } }
  val:   { kind: generate, with: { suites: [base], split: validation, per_suite: 6 } }
  start: { kind: policy.init, with: { hidden: [16], seed: $seed } }
  curriculum:
    kind: stages
    count: 2
    from: { config: { preset: easy }, policy: $start }
    each:
      envs:     { kind: generate, with: { config: $prev.config, count: 16, seed: $seed, stream: $stage } }
      policy:   { kind: train, with: { policy: $prev.policy, envs: $envs, updates: 2, parallel: 8, steps: 16, minibatch: 64 } }
      rollouts: { kind: rollout, with: { policy: $policy, envs: $envs } }
      findings: { kind: diagnose, with: { rollouts: $rollouts } }
      heldout:  { kind: evaluate, with: { policy: $policy, envs: $val, trajectories: false } }
      config:
        kind: redesign
        with: { engineer: rules, context: $matrix.context, config: $prev.config, findings: $findings, history: $earlier.findings, stage: $stage }
  last_envs:    { kind: generate, with: { config: $curriculum.config, count: 16, seed: $seed, stream: 2 } }
  last:         { kind: train, with: { policy: $curriculum.policy, envs: $last_envs, updates: 2, parallel: 8, steps: 16, minibatch: 64 } }
  last_heldout: { kind: evaluate, with: { policy: $last, envs: $val, trajectories: false } }
  score:        { kind: evaluate, with: { policy: $last, envs: $bench } }
tables:
  - { name: clone_test, node: score, rows: context, columns: value.suites.*.success_rate, over: seed, aggregate: mean }
`;

function ctxOf(cache: string): CommandContext {
  return {
    kinds: [...builtinKinds, ...domainKinds],
    cache,
    output: { out: () => {}, err: () => {} },
    reporter: new SilentReporter(),
    env: () => undefined,
  };
}

/** Chromium's DOM text of a page and a screenshot at `width`. */
async function render(
  page: string,
  width: number,
  png: string,
): Promise<string> {
  const profile = Deno.makeTempDirSync({ prefix: "envsmith-chromium-" });
  try {
    const common = [
      ...HEADLESS_FLAGS,
      "--hide-scrollbars",
      `--user-data-dir=${profile}`,
      `--window-size=${width},1600`,
    ];
    const shot = await new Deno.Command(CHROMIUM, {
      args: [...common, `--screenshot=${png}`, `file://${page}`],
      stdout: "null",
      stderr: "null",
    }).output();
    assert.equal(shot.code, 0, "chromium took the screenshot");
    const dom = await new Deno.Command(CHROMIUM, {
      args: [...common, "--dump-dom", `file://${page}`],
      stdout: "piped",
      stderr: "null",
    }).output();
    assert.equal(dom.code, 0);
    return new TextDecoder().decode(dom.stdout);
  } finally {
    Deno.removeSync(profile, { recursive: true });
  }
}

/** The visible text of a DOM dump: no tags, no SVG titles' markup, no CSS. */
function textOf(dom: string): string {
  return dom.replace(/<style>[^]*?<\/style>/g, "").replace(/<[^>]*>/g, " ")
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
}

const ERROR_TEXT =
  /error|cannot read|no such file|os error|readfile|NotFound|undefined|NaN|\[object|stack/i;

Deno.test({
  name:
    `report from a fresh clone's bundle: whole in Chromium at 1280 and 800 px, failure cases from the bundle, no error text${
      HAVE_CHROMIUM
        ? ""
        : ` [ignored: ${CHROMIUM} is not installed; apt-get install -y chromium]`
    }`,
  ignore: !HAVE_CHROMIUM,
  sanitizeResources: false,
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "envsmith-clone-" });
    try {
      const file = join(dir, "clone.yaml");
      Deno.writeTextFileSync(file, YAML);
      const computed = join(dir, "cache");
      const run = await runCommand(ctxOf(computed), file, { jobs: 2 });
      assert.equal(run.code, 0);
      // Bundles like the shipped one: every entry as JSON; one also carries
      // the first seed's last-stage rollouts, scores and benchmark.
      const withCases = join(dir, "with-cases.esb.gz");
      const without = join(dir, "json-only.esb.gz");
      for (const [bundle, blobsOf] of [[withCases, true], [without, false]]) {
        assert.equal(
          await cacheExportCommand(ctxOf(computed), bundle as string, {
            jsonOnly: true,
            experiments: [file],
            ...(blobsOf
              ? {
                blobsOf: [
                  "bench",
                  "curriculum.1.rollouts[*seed=1]",
                  "score[*seed=1]",
                ],
              }
              : {}),
          }),
          0,
        );
      }
      for (const [bundle, cases] of [[withCases, true], [without, false]]) {
        const fresh = join(dir, `fresh-${cases}`);
        const out = join(dir, `report-${cases}.html`);
        const code = await runReport(ctxOf(fresh), [file], {
          out,
          import: [bundle as string],
        });
        assert.equal(code, 0, "complete from the bundle");
        const html = Deno.readTextFileSync(out);
        // A table of contents; every section beyond the results folded.
        assert.match(
          html,
          /<nav class="toc"><a href="#exp-clone-test-results">Results<\/a>/,
        );
        assert.equal(
          [...html.matchAll(/<details class="section" id="[^"]*">/g)].length,
          4,
        );
        assert.ok(!/<details class="section"[^>]* open/.test(html));
        // Held-out success per stage, the last stage appended, schedules.
        assert.match(html, /data-heldout="3"/);
        assert.match(html, /the last stage is <code>last<\/code>/);
        assert.match(html, /<div class="sched" data-variant="full">/);
        assert.match(html, /2 runs · \d of 2 chose the same schedule/);
        assert.match(html, /<svg class="dag"/);
        if (cases) {
          assert.ok(
            (html.match(/<figure class="case" data-source="training"/g) ?? [])
              .length >= 1,
            "training failure cases from the bundle's rollouts",
          );
          assert.match(html, /<figure class="case" data-source="evaluation"/);
          assert.ok(!html.includes('class="empty absent"'));
        } else {
          assert.ok(!html.includes('<figure class="case"'));
          assert.match(
            html,
            /<p class="empty absent">Failure cases are drawn from recorded trajectories, which this cache holds without their data for \d+ nodes \(results imported without it\); compute them with: <code class="command">\.\/envsmith run [^<]+<\/code><\/p>/,
          );
        }
        for (const width of cases ? [1280, 800] : [1280]) {
          const png = join(dir, `shot-${cases}-${width}.png`);
          const dom = await render(out, width, png);
          const bytes = Deno.readFileSync(png);
          assert.deepEqual(
            [...bytes.subarray(1, 4)],
            [0x50, 0x4e, 0x47],
            "a PNG",
          );
          assert.ok(bytes.length > 20_000, `a real page (${bytes.length} B)`);
          const text = textOf(dom);
          assert.match(text, /clone-test/);
          const bad = ERROR_TEXT.exec(text);
          assert.equal(
            bad,
            null,
            `error text on the page: …${
              bad ? text.slice(Math.max(0, bad.index - 80), bad.index + 80) : ""
            }…`,
          );
        }
      }
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
