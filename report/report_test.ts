import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadExperiment } from "@envsmith/engine/compile";
import { computeKeys, Store } from "@envsmith/engine/cache";
import { builtinKinds, SilentReporter } from "@envsmith/engine/run";
import { formatCell, type Table } from "@envsmith/engine/tables";
import {
  buildTables,
  cacheExportCommand,
  type CommandContext,
  runCommand,
} from "@envsmith/engine/cli";
import { main } from "../cli.ts";
import { kinds as domainKinds } from "../nodes/mod.ts";
import { loadRollouts } from "../nodes/diagnose.ts";
import type { Episode, Instance } from "../mapf/mod.ts";
import { buildReport, secretEnvValues } from "./build.ts";
import { runReport } from "./command.ts";
import { CHROMIUM, HEADLESS_FLAGS } from "./_test_util.ts";
import type { ConfigTrajectory } from "./data.ts";
import { escapeHtml } from "./escape.ts";
import { curvesHtml, meanSeries, renderReportHtml, tableHtml } from "./html.ts";
import { niceTicks, shortNumber } from "./svg_charts.ts";
import { SHIPPED_BUNDLES } from "../nodes/project_paths.ts";

// A tiny experiment: 2 stages of a few updates, two context variants run and a
// third skipped (requires an unset variable), evaluation on two small suites.
// Hostile strings sit in the description and a table title.
const YAML = `
experiment: report-test
description: "Report test <script>alert('desc')</script> & friends"
seed: 3
matrix:
  context:
    - { name: none }
    - { name: full }
    - { name: behavior, requires_env: [ENVSMITH_REPORT_TEST_NEVER_SET] }
nodes:
  bench: { kind: generate, with: { suites: [base, crowded], split: test, per_suite: 6 } }
  start: { kind: policy.init, with: { hidden: [16, 16], seed: $seed } }
  curriculum:
    kind: stages
    count: 2
    from: { config: { preset: easy }, policy: $start }
    each:
      envs:     { kind: generate, with: { config: $prev.config, count: 24, seed: $stage } }
      policy:   { kind: train, with: { policy: $prev.policy, envs: $envs, updates: 3, parallel: 16, steps: 16, minibatch: 128 } }
      rollouts: { kind: rollout, with: { policy: $policy, envs: $envs } }
      findings: { kind: diagnose, with: { rollouts: $rollouts } }
      config:
        kind: redesign
        with: { engineer: rules, context: $matrix.context.name, config: $prev.config, findings: $findings, history: $earlier.findings, stage: $stage }
  score: { kind: evaluate, with: { policy: $curriculum.policy, envs: $bench } }
  solo: { kind: train, with: { policy: $start, envs: $bench, updates: 2, parallel: 16, steps: 16, minibatch: 128 } }
tables:
  - name: report_test
    title: "Success <b>per</b> suite"
    node: score
    rows: context
    columns: value.suites.*.success_rate
    aggregate: mean
`;

const KINDS = [...builtinKinds, ...domainKinds];
const silent = { out: () => {}, err: () => {} };

function ctxOf(cache: string): CommandContext {
  return {
    kinds: KINDS,
    cache,
    output: silent,
    reporter: new SilentReporter(),
    env: () => undefined,
  };
}

let _fixture: Promise<{ dir: string; file: string; cache: string }> | null =
  null;
/** Runs the tiny experiment once per test file. */
function fixture() {
  _fixture ??= (async () => {
    const dir = Deno.makeTempDirSync({ prefix: "envsmith-report-" });
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch { /* already gone */ }
    });
    const file = join(dir, "report.yaml");
    Deno.writeTextFileSync(file, YAML);
    const cache = join(dir, "cache");
    const r = await runCommand(ctxOf(cache), file, { jobs: 2 });
    assert.equal(r.code, 0, "the tiny experiment runs");
    return { dir, file, cache };
  })();
  return _fixture;
}

/** Text content of an HTML fragment (tags stripped, entities decoded). */
function textOf(html: string): string {
  return html.replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(
    /&gt;/g,
    ">",
  ).replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

const VOID = new Set([
  "meta",
  "link",
  "br",
  "hr",
  "img",
  "input",
  "col",
  "area",
  "base",
  "wbr",
  "source",
]);

/**
 * A minimal well-formedness check: tags nest and close (HTML void elements
 * aside), attribute values are quoted, no raw `<` in text, `&` only starts
 * an entity. `xml` also forbids void elements (SVG must be XML).
 */
function checkMarkup(src: string, xml: boolean): void {
  const stack: string[] = [];
  const body = src.replace(/^<!DOCTYPE html>/i, "");
  const re =
    /<(\/?)([A-Za-z][A-Za-z0-9-]*)((?:\s+[A-Za-z_:][-A-Za-z0-9_:.]*(?:="[^"<]*")?)*)\s*(\/?)>/g;
  let last = 0;
  for (let m; (m = re.exec(body));) {
    const text = body.slice(last, m.index);
    assert.ok(!text.includes("<"), `raw < in text near ${text.slice(-60)}`);
    assert.ok(
      !/&(?!(?:amp|lt|gt|quot|#39|#\d+);)/.test(text),
      `bare & near ${text.slice(0, 60)}`,
    );
    last = re.lastIndex;
    const [, close, name, , self] = m;
    const tag = name!.toLowerCase();
    if (self) continue;
    if (!close && VOID.has(tag)) {
      assert.ok(!xml, `void <${tag}> in XML`);
      continue;
    }
    if (close) {
      const open = stack.pop();
      assert.equal(open, tag, `</${tag}> closes <${open}>`);
    } else stack.push(tag);
  }
  assert.ok(!body.slice(last).includes("<"), "unparsed tag at the end");
  assert.deepEqual(stack, [], "every tag is closed");
}

Deno.test("report: tables, curves, config trajectories and failure cases of a cached run", async () => {
  const { file, cache } = await fixture();
  const ctx = ctxOf(cache);
  const { html, experiments } = await buildReport(ctx, [file]);
  const [rep] = experiments;
  assert.ok(rep);
  assert.deepEqual(rep.missing, [], "everything is cached");
  checkMarkup(html, false);

  // (1) Tables: the same cell texts as `deno task tables`.
  const tables = await buildTables(ctx, file);
  assert.equal(tables.length, 1);
  const t = tables[0]!;
  assert.deepEqual(t.columns, ["base", "crowded", "mean"]);
  let checked = 0;
  for (const c of t.cells) {
    if (c.row === "behavior") continue; // not run: one cell for the row (below)
    const m = new RegExp(
      `<td[^>]*data-row="${c.row}" data-col="${c.column}"[^>]*>(.*?)</td>`,
    ).exec(html);
    assert.ok(m, `cell ${c.row}/${c.column} is in the page`);
    assert.equal(textOf(m[1]!), formatCell(t, c));
    if (c.mean !== null) {
      assert.ok(textOf(m[1]!).startsWith(c.mean.toFixed(3)));
      checked++;
    }
  }
  assert.equal(checked, 6, "2 variants x 3 columns with numbers");
  assert.match(
    html,
    /<td class="skipped row" colspan="3" data-row="behavior" data-col="\*">not run: ENVSMITH_REPORT_TEST_NEVER_SET not set<\/td>/,
  );

  // (2) Curves: one series per variant run, one point per update of every stage.
  const { exp, keyOf } = await compiledKeys(file);
  const store = new Store(cache);
  const entryOf = (id: string) => store.readEntry(keyOf(id))!;
  assert.deepEqual(rep.curves.map((c) => c.group), ["curriculum", "solo"]);
  const set = rep.curves[0]!;
  // A train node outside stages: one stage, one series (no matrix axis).
  const solo = rep.curves[1]!;
  assert.equal(solo.stages, 1);
  assert.deepEqual(solo.series.map((s) => s.nodes), [["solo"]]);
  assert.equal(solo.series[0]!.points.length, 2);
  assert.equal(set.stages, 2);
  assert.deepEqual(set.series.map((s) => s.label), [
    "none",
    "full",
    "behavior",
  ]);
  for (const ctxName of ["none", "full"]) {
    const ids = [
      "curriculum.0.policy",
      `curriculum.1.policy[context=${ctxName}]`,
    ];
    const expected = ids.flatMap((id) =>
      (entryOf(id).report as {
        curve: { samples: number; success: number | null }[];
      })
        .curve
    );
    assert.equal(expected.length, 6, "3 updates x 2 stages");
    const s = set.series.find((x) => x.label === ctxName)!;
    assert.deepEqual(s.nodes, ids);
    assert.deepEqual(
      s.points.map((p) => p.samples),
      expected.map((p) => p.samples),
    );
    const shown = expected.filter((p) => p.success !== null).length;
    const g = new RegExp(
      `<g class="series" data-variant="${ctxName}" data-points="(\\d+)"><title>[^<]*</title>\\n((?:<polyline[^>]*>\\n?|<circle[^>]*>\\n?)+)</g>`,
    ).exec(html);
    assert.ok(g, `a curve for ${ctxName}`);
    assert.equal(Number(g[1]), shown);
    const pts = [...g[2]!.matchAll(/points="([^"]*)"/g)].flatMap((x) =>
      x[1]!.split(" ")
    ).length + [...g[2]!.matchAll(/<circle/g)].length;
    assert.equal(pts, shown, `${ctxName}: one vertex per point`);
  }
  assert.equal(
    [...html.matchAll(/<g class="series"/g)].length,
    3,
    "none, full and solo; no curve for the skipped variant",
  );
  assert.ok(set.series[2]!.skipped?.includes("ENVSMITH_REPORT_TEST_NEVER_SET"));
  assert.match(
    html,
    /behavior: not run: ENVSMITH_REPORT_TEST_NEVER_SET not set/,
  );
  assert.match(html, /stage 1<\/text>/, "stage boundary marked");

  // (3) Config trajectories equal the redesign outputs.
  for (const ctxName of ["none", "full"]) {
    const tr: ConfigTrajectory = rep.trajectories.find((x) =>
      x.label === ctxName
    )!;
    assert.equal(tr.rows.length, 2);
    tr.rows.forEach((row, stage) => {
      const e = entryOf(`curriculum.${stage}.config[context=${ctxName}]`);
      const r = e.report as {
        engineer: string;
        context: string;
        rationale: string;
        diff: {
          from_id: string;
          to_id: string;
          components: { changes: { path: string }[] }[];
        };
      };
      assert.equal(row.status, "ok");
      assert.equal(row.engineer, "rules");
      assert.equal(row.context, ctxName);
      assert.equal(row.fromId, r.diff.from_id);
      assert.equal(row.toId, r.diff.to_id);
      assert.equal(row.rationale, r.rationale);
      assert.deepEqual(
        new Set(row.dimensions),
        new Set(r.diff.components.flatMap((c) => c.changes.map((x) => x.path))),
      );
      assert.ok(html.includes(`data-to="${r.diff.to_id}"`));
      assert.ok(html.includes(escapeHtml(r.rationale)));
    });
    // The next stage trains on the config the redesign chose.
    assert.equal(tr.rows[1]!.fromId, tr.rows[0]!.toId);
  }
  const skippedTr = rep.trajectories.find((x) => x.label === "behavior")!;
  assert.ok(skippedTr.rows.every((r) => r.status === "skipped"));

  // (4) Failure cases: well-formed SVGs with a failure mark and a caption.
  assert.ok(rep.failures.length >= 2, "failure cases found");
  assert.ok(rep.failures.some((f) => f.source === "training"));
  assert.ok(rep.failures.some((f) => f.source === "evaluation"));
  for (const f of rep.failures) {
    checkMarkup(f.svg, true);
    assert.match(f.svg, /^<svg class="case-map"/);
    assert.ok(
      f.svg.includes(`class="fail-mark"`),
      `${f.node} ep ${f.episode}: failure marked`,
    );
    assert.ok(html.includes(f.svg), "the SVG is inline in the page");
    assert.ok(html.includes(escapeHtml(f.caption)));
    assert.match(f.caption, /^Failure: /);
  }
  // Each picture shows the episode the case names: same instance and outcome,
  // and the failure where the marks are (a hole under a fallen agent, two
  // agents in one cell for a vertex collision).
  const readBlob = (ref: { $blob: string }) =>
    Promise.resolve(store.readBlob(ref));
  let located = 0;
  for (const f of rep.failures) {
    const node = exp.nodes[exp.byId.get(f.node)!]!;
    let episodes: Episode[], instances: Instance[];
    if (f.source === "training") {
      const findings = entryOf(f.node).value as {
        failures: { episode: number; outcome: string; step: number }[];
      };
      const c = findings.failures.find((x) => x.episode === f.episode)!;
      assert.equal(f.outcome, c.outcome);
      assert.equal(f.step, c.step);
      const ro = node.deps.map((i) => exp.nodes[i]!).find((d) =>
        d.kind.name === "rollout"
      )!;
      ({ episodes, instances } = await loadRollouts(
        entryOf(ro.id).value,
        undefined,
        null,
        { readBlob },
      ));
    } else {
      ({ episodes, instances } = await loadRollouts(
        {
          trajectories:
            (entryOf(f.node).value as { trajectories: unknown }).trajectories,
        },
        entryOf("bench").value,
        null,
        { readBlob },
      ));
    }
    const ep = episodes[f.episode]!;
    assert.equal(ep.instance, f.instance);
    assert.equal(ep.outcome === "running" ? "timeout" : ep.outcome, f.outcome);
    const inst = instances.find((i) => i.id === f.instance)!;
    const pos = (a: number) => ep.positions[f.step * ep.agents + a]!;
    if (f.outcome === "hole") {
      const p = pos(f.agents[0]!);
      assert.equal(
        inst.cells[Math.floor(p / inst.width)]![p % inst.width],
        "H",
      );
      located++;
    } else if (f.outcome === "vertex_collision") {
      assert.equal(pos(f.agents[0]!), pos(f.agents[1]!));
      located++;
    }
  }
  assert.ok(located > 0, "some failures were located on the map");
  assert.equal(
    [...html.matchAll(/<svg /g)].length,
    3 + rep.failures.length,
    "two charts, the graph and one picture per case",
  );
  assert.ok(!/<script/i.test(html), "no script anywhere");
  assert.ok(
    !/https?:\/\/(?!www\.w3\.org\/2000\/svg)/.test(html),
    "no external URL",
  );

  // Deterministic.
  const again = await buildReport(ctx, [file]);
  assert.equal(again.html, html);
});

/**
 * The experiment `file` as a run compiles it, and the cache key of each of its
 * nodes by id.
 */
async function compiledKeys(file: string) {
  const exp = await loadExperiment(file, {
    kinds: KINDS,
    env: () => undefined,
  });
  const keys = computeKeys(exp);
  return { exp, keyOf: (id: string) => keys[exp.byId.get(id)!]!.key };
}

Deno.test("report: hostile strings from the file and the cache are escaped", async () => {
  const { dir, file, cache } = await fixture();
  // Copy the cache, then replace one redesign entry by one with a hostile rationale.
  const copy = join(dir, "cache-hostile");
  await new Deno.Command("cp", { args: ["-r", cache, copy] }).output();
  const { keyOf } = await compiledKeys(file);
  const store = new Store(copy);
  const key = keyOf("curriculum.1.config[context=full]");
  const e = store.readEntry(key)!;
  const hostile =
    `</td></tr></table><script>alert("x")</script><img src=x onerror=alert(1)> & sk-not-a-real-key-123456`;
  Deno.removeSync(store.entryPath(key));
  store.writeEntry(
    {
      ...e,
      report: {
        ...(e.report as Record<string, unknown>),
        rationale: hostile,
        events: [
          { type: "rule", detail: "harden-mastered" },
          { type: "fallback", detail: "kept <b>the</b> config" },
        ],
      },
    } as typeof e,
  );
  const { html } = await buildReport(ctxOf(copy), [file], {
    redact: ["sk-not-a-real-key-123456"],
  });
  checkMarkup(html, false);
  assert.ok(!/<script/i.test(html));
  assert.ok(!html.includes("<img"));
  assert.ok(html.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
  assert.ok(html.includes("Report test &lt;script&gt;alert(&#39;desc&#39;)"));
  assert.ok(html.includes("Success &lt;b&gt;per&lt;/b&gt; suite"));
  assert.ok(
    html.includes(
      `<span class="event bad">fallback: kept &lt;b&gt;the&lt;/b&gt; config</span>`,
    ),
    "fallback events are shown, escaped",
  );
  assert.ok(!html.includes("harden-mastered</span>"), "rule firings are not");
  assert.ok(!html.includes("sk-not-a-real-key-123456"), "redacted");
  assert.ok(html.includes("[redacted]"));
});

Deno.test("report: nodes missing from the cache are listed with the command that computes them", async () => {
  const { dir, file, cache } = await fixture();
  // An empty cache: everything is missing, the page still renders.
  const empty = join(dir, "cache-empty");
  const { html, experiments } = await buildReport(ctxOf(empty), [file]);
  checkMarkup(html, false);
  const rep = experiments[0]!;
  assert.ok(rep.missing.includes("score[context=none]"));
  assert.ok(rep.missing.includes("curriculum.0.policy"));
  assert.ok(
    !rep.missing.some((id) => id.includes("behavior")),
    "skipped is not missing",
  );
  assert.equal(rep.command, `./envsmith run ${file}`);
  assert.match(html, /Incomplete: \d+ nodes are not in the cache/);
  assert.ok(html.includes(`data-missing="curriculum.0.policy"`));
  assert.ok(
    html.includes(`<code class="command">./envsmith run ${file}</code>`),
  );
  // One train entry and one evaluation removed: exactly they are missing,
  // with an --only command.
  const partial = join(dir, "cache-partial");
  await new Deno.Command("cp", { args: ["-r", cache, partial] }).output();
  const { keyOf } = await compiledKeys(file);
  const store = new Store(partial);
  const id = "curriculum.1.policy[context=full]";
  Deno.removeSync(store.entryPath(keyOf(id)));
  const score = "score[context=none]";
  Deno.removeSync(store.entryPath(keyOf(score)));
  const out = join(dir, "partial.html");
  const code = await runReport(ctxOf(partial), [file], { out });
  assert.equal(code, 1, "incomplete report exits 1, like tables");
  const page = Deno.readTextFileSync(out);
  const r2 = (await buildReport(ctxOf(partial), [file])).experiments[0]!;
  assert.deepEqual(new Set(r2.missing), new Set([id, score]));
  assert.equal(
    r2.command,
    `./envsmith run ${file} --only '${id}' '${score}'`,
  );
  assert.match(
    page,
    /<td class="missing[^"]*" data-row="none" data-col="base">missing<\/td>/,
  );
  assert.match(
    page,
    /<td class="bar[^"]*" data-row="full" data-col="base"/,
    "the other row still has its numbers",
  );
  assert.ok(page.includes(`data-missing="${escapeHtml(id)}"`));
  assert.ok(page.includes("not in the cache: full: 1 of 2 stages"));
  const full = r2.curves[0]!.series.find((s) => s.label === "full")!;
  assert.deepEqual(full.missing, [id]);
  assert.equal(full.points.length, 3, "stage 0 is still drawn");
});

Deno.test("report: the CLI writes the page and exits 0 when complete", async () => {
  const { dir, file, cache } = await fixture();
  const out = join(dir, "sub", "index.html");
  const lines: string[] = [];
  const code = await main(["--cache", cache, "report", file, "--out", out], {
    output: { out: (l) => lines.push(l), err: (l) => lines.push(l) },
  });
  assert.equal(code, 0, lines.join("\n"));
  const html = Deno.readTextFileSync(out);
  assert.match(html, /^<!DOCTYPE html>/);
  assert.ok(html.includes(`data-experiment="report-test"`));
  const bad = await main(["--cache", cache, "report", join(dir, "nope.yaml")], {
    output: { out: (l) => lines.push(l), err: (l) => lines.push(l) },
  });
  assert.equal(bad, 2, "a missing file is a user error");
});

Deno.test("report: means over seeds are interpolated on cumulative agent-steps (monotone in x); held-out success per stage is a dashed line", () => {
  // Two seeds whose stages end at different sample counts: by update number
  // their points interleave in x (the old mean stepped backwards).
  const run = (seed: number, xs: number[], ys: number[]) => ({
    variant: { seed: String(seed) },
    label: `seed=${seed}`,
    series: "v",
    points: xs.map((x, i) => ({
      stage: i < 3 ? 0 : 1,
      update: i + 1,
      samples: x,
      success: ys[i]!,
    })),
    stageStarts: [0, xs[2]!],
    nodes: ["p0", "p1"],
    missing: [],
    heldout: [
      { stage: 0, samples: xs[2]!, success: 0.2 + seed * 0.1 },
      { stage: 1, samples: xs[5]!, success: 0.5 + seed * 0.1 },
    ],
  });
  const members = [
    run(1, [100, 200, 300, 400, 500, 600], [0, 0.2, 0.4, 0.6, 0.8, 1]),
    run(2, [150, 260, 330, 460, 520, 650], [0, 0.2, 0.4, 0.6, 0.8, 1]),
  ];
  const { points } = meanSeries(members);
  const xs = points.map((p) => p[0]);
  for (let i = 1; i < xs.length; i++) assert.ok(xs[i]! > xs[i - 1]!);
  assert.equal(xs[0], 100);
  assert.equal(xs.at(-1), 650);
  // At x = 300: seed 1 is at 0.4; seed 2 between 260 (0.2) and 330 (0.4).
  const at300 = (0.4 + (0.2 + 0.2 * (40 / 70))) / 2;
  const near = points.find((p) => Math.abs(p[0] - 300) < 1e-9);
  if (near) assert.ok(Math.abs(near[1]! - at300) < 1e-9);
  const html = curvesHtml({
    group: "curriculum",
    name: "policy",
    stages: 2,
    appended: "last",
    heldoutNode: "curriculum.*.heldout",
    series: members,
  });
  const held =
    /<g class="series" data-variant="v" data-heldout="2">[^]*?<polyline points="([^"]*)"[^>]*stroke-dasharray="5 4"/
      .exec(html);
  assert.ok(held, "a dashed held-out line");
  // Its two points: the stage ends (mean 315, mean 625) at means 0.35, 0.65.
  assert.equal(held![1]!.split(" ").length, 2);
  assert.match(
    html,
    /the last stage is <code>last<\/code>, trained on the last redesign/,
  );
  assert.match(
    html,
    /held-out instances \(<code>curriculum\.\*\.heldout<\/code>/,
  );
  assert.match(html, />last<\/text>/, "the appended stage's marker");
});

Deno.test("report: one line per variant with a ± 1 std band over its seeds; the mean column first; one time stamp", async () => {
  const point = (update: number, success: number | null) => ({
    stage: 0,
    update,
    samples: update * 100,
    success,
  });
  const series = (context: string, seed: number, ys: (number | null)[]) => ({
    variant: { context, seed: String(seed) },
    label: `context=${context}, seed=${seed}`,
    series: context,
    points: ys.map((y, i) => point(i + 1, y)),
    stageStarts: [0],
    nodes: [`p[context=${context},seed=${seed}]`],
    missing: [],
    heldout: [],
  });
  const html = curvesHtml({
    group: "curriculum",
    name: "policy",
    stages: 1,
    series: [
      series("none", 1, [0.2, 0.4, 0.6]),
      series("none", 2, [0.4, 0.6, null]),
      series("none", 3, [0.6, 0.8, 0.8]),
      series("full", 1, [0.5, 0.5, 0.5]),
    ],
  });
  const groups = [...html.matchAll(/<g class="series" ([^>]*)>/g)].map((m) =>
    m[1]
  );
  assert.deepEqual(groups, [
    'data-variant="none" data-runs="3" data-points="3"',
    'data-variant="full" data-points="3"',
  ]);
  // none: means 0.4, 0.6, 0.7 at updates 1..3 (the third over two seeds).
  const chartY = (y: number) => 26 + (1 - y) * 240;
  const line =
    /<g class="series" data-variant="none"[^]*?<polyline points="([^"]*)"/.exec(
      html,
    )!;
  assert.deepEqual(
    line[1]!.split(" ").map((p) => Number(p.split(",")[1])),
    [0.4, 0.6, 0.7].map((y) => Math.round(chartY(y) * 10) / 10),
  );
  assert.equal([...html.matchAll(/<polygon class="band"/g)].length, 1);
  assert.match(html, /none \(mean of 3\)/, "legend: one entry per variant");
  assert.match(html, /the band ± 1 std over them/);
  assert.match(html, /Means over seeds are taken on cumulative agent-steps/);

  const { file, cache } = await fixture();
  const page = (await buildReport(ctxOf(cache), [file])).html;
  assert.match(
    page,
    /<thead><tr><th scope="col">context<\/th><th scope="col" class="agg">mean<\/th><th scope="col">base<\/th><th scope="col">crowded<\/th><\/tr><\/thead>/,
  );
  const stamps = [
    ...page.matchAll(/computed (\d{4}-\d\d-\d\d \d\d:\d\d) UTC/g),
  ];
  assert.equal(stamps.length, 1, "one time stamp");
  assert.match(page, /<span class="computed"[^>]*>results computed /);
});

Deno.test("report: cells from an imported bundle are marked † the engine flags as `imported`", () => {
  const cell = (column: string, imported: boolean) => ({
    row: "rules",
    column,
    mean: 0.5,
    std: 0.1,
    n: 3,
    samples: [],
    missing: [],
    notes: [],
    ...(imported ? { imported: true } : {}),
  });
  const t: Table = {
    name: "t",
    title: "t",
    experiment: "x",
    file: "x.yaml",
    rowsAxis: "method",
    rows: ["rules"],
    columns: ["base", "mean"],
    aggregate: "mean",
    over: { axis: "seed", values: ["1", "2", "3"] },
    cells: [cell("base", true), cell("mean", false)],
    missing: [],
    digits: 3,
  };
  const html = tableHtml(t);
  assert.match(
    html,
    /data-col="base"[^>]*><span class="m">0\.500<span class="imported" title="from an imported results bundle \(computed elsewhere\)">†<\/span><\/span>/,
  );
  assert.match(html, /data-col="mean"[^>]*><span class="m">0\.500<\/span>/);
  assert.match(
    html,
    /† from an imported results bundle \(computed elsewhere\)\.<\/figcaption>/,
  );
  const plain = tableHtml({
    ...t,
    cells: [cell("base", false), cell("mean", false)],
  });
  assert.ok(!plain.includes("†"));
});

Deno.test("report --import: a fresh cache shows the results of a bundle, as `deno task report` shows the shipped one", async () => {
  const { dir, file, cache } = await fixture();
  // A bundle like the shipped one: only the entries the tables read.
  const bundle = join(dir, "scores.esb.gz");
  const ex = await cacheExportCommand(ctxOf(cache), bundle, {
    jsonOnly: true,
    filter: ["score"],
    experiments: [file],
  });
  assert.equal(ex, 0);
  const fresh = join(dir, "cache-fresh");
  const without = join(dir, "without.html");
  assert.equal(await runReport(ctxOf(fresh), [file], { out: without }), 1);
  assert.match(
    Deno.readTextFileSync(without),
    /<td class="missing[^"]*" data-row="full" data-col="mean">missing<\/td>/,
  );
  const errs: string[] = [];
  const out = join(dir, "with.html");
  const ctx = {
    ...ctxOf(fresh),
    output: { out: () => {}, err: (l: string) => errs.push(l) },
  };
  await runReport(ctx, [file], { out, import: [bundle] });
  assert.match(errs.join("\n"), /imported .*scores\.esb\.gz .*: 2 entries/);
  const page = Deno.readTextFileSync(out);
  const want = formatCell(
    (await buildTables(ctxOf(cache), file))[0]!,
    (await buildTables(ctxOf(cache), file))[0]!.cells.find((c) =>
      c.row === "full" && c.column === "mean"
    )!,
  );
  // The bundle's numbers, marked as imported (computed elsewhere).
  assert.match(
    page,
    new RegExp(
      `data-row="full" data-col="mean"[^>]*><span class="m">${
        want.split(" ")[0]!.replace(".", "\\.")
      }<span class="imported"[^>]*>†</span></span>`,
    ),
  );
  assert.match(
    page,
    /<td class="skipped row" colspan="3" data-row="behavior" data-col="\*">not run: ENVSMITH_REPORT_TEST_NEVER_SET not set<\/td>/,
  );
  // A bundle that is not there is a note, not an error.
  errs.length = 0;
  await runReport(ctx, [file], { out, import: [join(dir, "nope.esb.gz")] });
  assert.match(
    errs.join("\n"),
    /no results bundle at .*nope\.esb\.gz; using the cache only/,
  );
});

Deno.test("deno task tables and deno task report import the shipped bundles", () => {
  const tasks = (JSON.parse(
    Deno.readTextFileSync(new URL("../deno.json", import.meta.url)),
  ) as { tasks: Record<string, string> }).tasks;
  for (const t of ["tables", "report"]) {
    assert.ok(
      tasks[t]!.endsWith(
        ` ${t} ${SHIPPED_BUNDLES.map((b) => `--import ${b}`).join(" ")}`,
      ),
      `${t}: ${tasks[t]}`,
    );
  }
  for (const b of SHIPPED_BUNDLES) {
    assert.ok(Deno.statSync(new URL(`../${b}`, import.meta.url)).isFile, b);
  }
});

const HAVE_CHROMIUM = existsSync(CHROMIUM);
/** What a browser test's name says where it is ignored for want of Chromium. */
const IGNORED = HAVE_CHROMIUM
  ? ""
  : " [ignored: /usr/bin/chromium is not installed; apt-get install -y chromium]";

/**
 * Headless Chromium's DOM dump of the local `page` (flags `extra` added), run
 * with a fresh profile directory that is removed afterwards.
 */
async function dumpDom(
  page: string,
  extra: string[] = [],
): Promise<Deno.CommandOutput> {
  const profile = Deno.makeTempDirSync({ prefix: "envsmith-chromium-" });
  try {
    return await new Deno.Command(CHROMIUM, {
      args: [
        ...HEADLESS_FLAGS,
        "--disable-sync",
        `--user-data-dir=${profile}`,
        ...extra,
        "--dump-dom",
        `file://${page}`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
  } finally {
    Deno.removeSync(profile, { recursive: true });
  }
}

Deno.test({
  name:
    `report: renders in headless Chromium (tables and SVGs in the DOM)${IGNORED}`,
  ignore: !HAVE_CHROMIUM,
  async fn() {
    const { dir, file, cache } = await fixture();
    const out = join(dir, "chromium.html");
    await runReport(ctxOf(cache), [file], { out });
    const r = await dumpDom(out);
    const dom = new TextDecoder().decode(r.stdout);
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr).slice(-2000));
    assert.match(dom, /<table class="results" data-table="report_test">/);
    assert.ok([...dom.matchAll(/<table class="traj-table">/g)].length >= 2);
    const svgs = [...dom.matchAll(/<svg[^>]*class="(chart|case-map)"/g)];
    assert.ok(svgs.some((m) => m[1] === "chart"), "the chart is in the DOM");
    assert.ok(
      svgs.filter((m) => m[1] === "case-map").length >= 2,
      "failure pictures are in the DOM",
    );
    assert.match(dom, /<polyline /);
    assert.ok(!/<script/i.test(dom));
  },
});

Deno.test({
  name:
    `report: in headless Chromium at 1280 and 800 px the mean column is on screen without scrolling${IGNORED}`,
  ignore: !HAVE_CHROMIUM,
  async fn() {
    const { dir } = await fixture();
    // The shape of the ablation's table: 5 rows, 8 suites and the mean,
    // every cell mean ± std.
    const suites = [
      "base",
      "corridors",
      "crossing",
      "crowded",
      "holey",
      "large",
      "slippery",
      "tight",
    ];
    const rows = ["none", "stats", "failures", "behavior", "full"];
    const table: Table = {
      name: "ablate-context",
      title:
        "Success rate on the benchmark suites by context type (mean ± std over 3 seeds)",
      experiment: "ablate-context",
      file: "experiments/ablate-context.yaml",
      rowsAxis: "context",
      rows,
      columns: [...suites, "mean"],
      aggregate: "mean",
      over: { axis: "seed", values: ["1", "2", "3"] },
      cells: rows.flatMap((row) =>
        [...suites, "mean"].map((column) => ({
          row,
          column,
          mean: 0.123,
          std: 0.045,
          n: 3,
          samples: [],
          missing: [],
          notes: [],
        }))
      ),
      missing: [],
      digits: 3,
    };
    const page = renderReportHtml([{
      name: "ablate-context",
      file: "experiments/ablate-context.yaml",
      warnings: [],
      graph: { experiment: "x", nodes: [], edges: [], clusters: new Map() },
      axes: [],
      tables: [table],
      curves: [],
      trajectories: [],
      failures: [],
      failureNotes: [],
      missing: [],
    }]);
    // A test-only copy with a script that records the layout in the DOM
    // (the report itself has no script).
    const probe = join(dir, "layout-probe.html");
    Deno.writeTextFileSync(
      probe,
      page.replace(
        "</body>",
        `<script>
const th = document.querySelector('table.results th.agg');
const r = th.getBoundingClientRect();
const wrap = th.closest('.scroll');
document.body.setAttribute('data-layout', JSON.stringify({
  meanLeft: r.left, meanRight: r.right, viewport: window.innerWidth,
  tableScrolls: wrap.scrollWidth > wrap.clientWidth,
  pageScrolls: document.documentElement.scrollWidth > window.innerWidth,
}));
</script></body>`,
      ),
    );
    for (const width of [1280, 800]) {
      const r = await dumpDom(probe, [`--window-size=${width},900`]);
      const dom = new TextDecoder().decode(r.stdout);
      const m = /data-layout="([^"]*)"/.exec(dom);
      assert.ok(m, `no layout probe at ${width} px: ${dom.slice(0, 300)}`);
      const layout = JSON.parse(m[1]!.replace(/&quot;/g, '"'));
      assert.equal(layout.viewport, width);
      assert.ok(
        layout.meanRight <= width && layout.meanLeft >= 0,
        `${width} px: mean column at ${layout.meanLeft}-${layout.meanRight}`,
      );
      assert.equal(
        layout.pageScrolls,
        false,
        `${width} px: the page scrolls sideways`,
      );
      assert.equal(
        layout.tableScrolls,
        false,
        `${width} px: the table scrolls`,
      );
    }
  },
});

Deno.test("report: ticks, short numbers, escaping and secret lookup", () => {
  assert.deepEqual(niceTicks(0, 1, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(niceTicks(0, 250000, 5), [
    0,
    50000,
    100000,
    150000,
    200000,
    250000,
  ]);
  assert.deepEqual(niceTicks(0, 7, 3), [0, 2.5, 5]);
  assert.equal(shortNumber(0), "0");
  assert.equal(shortNumber(125000), "125k");
  assert.equal(shortNumber(1500000), "1.5M");
  assert.equal(shortNumber(0.25), "0.25");
  assert.equal(escapeHtml(`a<b>&"c'`), "a&lt;b&gt;&amp;&quot;c&#39;");
  assert.deepEqual(
    secretEnvValues(() => ({
      OPENAI_API_KEY: "sk-123456789",
      HOME: "/root",
      GH_TOKEN: "short",
      DB_PASSWORD: "hunter2hunter2",
    })),
    ["sk-123456789", "hunter2hunter2"],
  );
  assert.deepEqual(
    secretEnvValues(() => {
      throw new Deno.errors.NotCapable("no env");
    }),
    [],
  );
});

Deno.test("report: a table's paired comparisons in its column order, the mean first, significant cells bold with *", () => {
  const cell = (row: string, column: string, mean: number) => ({
    row,
    column,
    mean,
    std: 0.01,
    n: 10,
    samples: [],
    missing: [],
    notes: [],
  });
  const cmpCell = (column: string, diff: number, lo: number, hi: number) => ({
    row: "full",
    column,
    n: 10,
    diff,
    lo,
    hi,
    p: 0.001953125,
    pHolm: 0.0039,
    exact: true,
    instanceLevel: true,
    excludesZero: lo > 0 || hi < 0,
  });
  const t: Table = {
    name: "ab",
    title: "ab",
    experiment: "x",
    file: "x.yaml",
    rowsAxis: "variant",
    rows: ["none", "full"],
    columns: ["base", "mean"],
    aggregate: "mean",
    over: { axis: "seed", values: ["1"] },
    cells: [
      cell("none", "base", 0.8),
      cell("none", "mean", 0.46),
      cell("full", "base", 0.9),
      cell("full", "mean", 0.58),
    ],
    missing: [],
    digits: 3,
    comparison: {
      against: "none",
      pairedBy: "seed",
      level: 0.95,
      resamples: 2000,
      rows: ["full"],
      cells: [
        cmpCell("base", 0.1, -0.01, 0.2),
        cmpCell("mean", 0.118, 0.098, 0.135),
      ],
      minPairs: 10,
    },
  };
  const html = tableHtml(t);
  const compare = html.slice(html.indexOf('data-compare="ab"'));
  // the mean column first, as in the results table
  assert.ok(compare.indexOf(">mean</th>") < compare.indexOf(">base</th>"));
  assert.match(
    compare,
    /<td class="sig agg" data-row="full" data-col="mean"><span class="m">\+0\.118\*<\/span><span class="ci">\[\+0\.098, \+0\.135\]<\/span><span class="p">p 0\.002 \/ 0\.004<\/span><\/td>/,
  );
  assert.match(
    compare,
    /<td class="" data-row="full" data-col="base"><span class="m">\+0\.100<\/span>/,
  );
  assert.match(compare, /<th scope="row">full − none<\/th><td>10<\/td>/);
  // The description sits above the scrolling table (a <caption> would be as
  // wide as the table and scroll out of a narrow window).
  const caption = html.indexOf(
    '<p class="cmp-caption">Paired differences against none (seed-paired): mean [95 % percentile bootstrap interval over seeds and instances, 2,000 seeded resamples]',
  );
  assert.ok(caption > 0 && caption < html.indexOf('data-compare="ab"'));
  assert.ok(
    !tableHtml((({ comparison: _, ...rest }) => rest)(t)).includes(
      "data-compare",
    ),
  );
});
