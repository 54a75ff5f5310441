import assert from "node:assert/strict";
import { join } from "node:path";
import type { NodeContext } from "@envsmith/engine/kind";
import { compileExperiment } from "@envsmith/engine/compile";
import { Store } from "@envsmith/engine/cache";
import { makePlan, runPlan } from "@envsmith/engine/run";
import { startStubServer } from "../llm/stub_server.ts";
import { ggufDigest } from "../llm/local.ts";
import { writeRandomGguf } from "../llm/random_gguf.ts";
import {
  configId,
  isMixture,
  parseEnvConfig,
  PRESETS,
} from "../schemas/env_config.ts";
import { promptDigest } from "../engineer/mod.ts";
import {
  historyFrom,
  redesign as redesignWith,
  redesignKind as redesignKindOver,
  type RedesignParams,
  redesignParamsSchema,
} from "./redesign.ts";
import { engineers } from "./engineers.ts";
import { families } from "./families.ts";
import { kind as diagnoseKind } from "./diagnose.ts";
import { buildContext } from "../engineer/context.ts";
import * as v from "valibot";
import { findingsAt } from "../engineer/_fixtures.ts";
import { withModelDir } from "../llm/_local_testing.ts";

const easy = PRESETS.easy;
const redesignKind = redesignKindOver(engineers, families);
const RedesignParamsSchema = redesignParamsSchema(engineers, families);
const redesign = (p: RedesignParams, seed: number) =>
  redesignWith(p, seed, { engineers, families });

function fakeCtx(dir: string, logs: string[]): NodeContext {
  return {
    id: "t",
    key: "0".repeat(64),
    seed: 11,
    signal: new AbortController().signal,
    workDir: dir,
    auxDir: join(dir, "aux"),
    baseDir: dir,
    progress() {},
    log(m) {
      logs.push(m);
    },
    writeBlob() {
      throw new Error("unused");
    },
    readBlob() {
      throw new Error("unused");
    },
  };
}

const findings = (success: number) => findingsAt(success, easy);

Deno.test("redesign node: rules engineer returns a valid next config with rationale, diff and events", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const logs: string[] = [];
    const params = v.parse(RedesignParamsSchema, {
      engineer: "rules",
      context: "stats",
      config: { preset: "easy" },
      findings: findings(0.9),
      stage: 0,
    });
    const r = await redesignKind.run(params, fakeCtx(dir, logs));
    const value = r.value as unknown as Parameters<typeof isMixture>[0];
    assert.ok(isMixture(value));
    const rep = r.report as Record<string, unknown>;
    assert.equal(rep.engineer, "rules");
    assert.equal(rep.context, "stats");
    assert.match(rep.rationale as string, /harden-mastered/);
    const diff = rep.diff as {
      changed: boolean;
      components: { status: string }[];
    };
    assert.equal(diff.changed, true);
    assert.deepEqual(diff.components.map((c) => c.status), ["kept", "added"]);
    assert.deepEqual(rep.events, [{ type: "rule", detail: "harden-mastered" }]);
    assert.deepEqual(rep.reads, ["stats.components", "stats.success_rate"]);
    assert.equal(rep.prompt_digest, null);
    assert.ok(logs[0]!.startsWith("rules engineer"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("redesign: same inputs give the same output; history accepts findings or {findings, config}", async () => {
  const f = findings(0.5);
  const params = v.parse(RedesignParamsSchema, {
    engineer: "random",
    config: easy,
    findings: f,
    history: [f, { findings: f, config: { preset: "medium" } }],
  });
  const a = await redesign(params, 5);
  const b = await redesign(params, 5);
  assert.equal(JSON.stringify(a), JSON.stringify(b));
  const h = historyFrom(params.history);
  assert.equal(h.length, 2);
  assert.equal(configId(h[1]!.config!), configId(PRESETS.medium));
  assert.throws(() => historyFrom([{ version: 1 }]), TypeError);
});

Deno.test("redesign kind: the llm prompt digest and an endpoint from the environment enter the key; other engineers add nothing", () => {
  assert.deepEqual(
    redesignKind.fingerprint!({ engineer: { name: "llm" } }, { baseDir: "." }),
    { prompts: promptDigest() },
  );
  // Matrix references are substituted before fingerprints: a resolved
  // `rules` adds nothing.
  assert.equal(
    redesignKind.fingerprint!({ engineer: "rules" }, { baseDir: "." }),
    null,
  );
  Deno.env.set("ENVSMITH_TEST_LLM_URL", "http://127.0.0.1:9/v1");
  try {
    const fp = (model: string) =>
      redesignKind.fingerprint!({
        engineer: {
          name: "llm",
          llm: {
            base_url_env: "ENVSMITH_TEST_LLM_URL",
            model,
            api_key_env: "ENVSMITH_TEST_LLM_KEY",
          },
        },
      }, { baseDir: "." });
    assert.deepEqual(fp("m1"), {
      prompts: promptDigest(),
      endpoint: { base_url: "http://127.0.0.1:9/v1", model: "m1" },
    });
    assert.notDeepEqual(fp("m1"), fp("m2"));
  } finally {
    Deno.env.delete("ENVSMITH_TEST_LLM_URL");
  }
  assert.throws(
    () =>
      redesignKind.fingerprint!({
        engineer: {
          name: "llm",
          llm: { base_url_env: "ENVSMITH_TEST_LLM_URL", model: "m" },
        },
      }, { baseDir: "." }),
    /ENVSMITH_TEST_LLM_URL, which is not set/,
  );
});

Deno.test("an API key never reaches anything the engine writes (sentinel key, successful and failing llm nodes)", async () => {
  const SENTINEL = "sk-envsmith-SENTINEL-c0ffee-1234567890";
  const VAR = "ENVSMITH_TEST_SENTINEL_KEY";
  Deno.env.set(VAR, SENTINEL);
  const seen: string[] = [];
  await using stub = startStubServer((req) => {
    seen.push(req.headers.get("authorization") ?? "");
    return req.body?.model === "bad"
      ? { status: 401, message: "invalid api key" }
      : {
        reply:
          '{"rationale": "add agents", "config": {"preset": "easy", "agents": 3}}',
      };
  });
  const dir = await Deno.makeTempDir({ prefix: "envsmith-secret-" });
  try {
    const yaml = `experiment: secret
seed: 3
nodes:
  good:
    kind: redesign
    with:
      engineer: { name: llm, llm: { base_url: "${stub.baseURL}", model: good, api_key_env: ${VAR}, max_retries: 0, timeout_ms: 5000 } }
      context: none
      config: { preset: easy }
  bad:
    kind: redesign
    with:
      engineer: { name: llm, llm: { base_url: "${stub.baseURL}", model: bad, api_key_env: ${VAR}, max_retries: 0, timeout_ms: 5000 } }
      context: none
      config: { preset: easy }
`;
    const file = join(dir, "exp.yaml");
    await Deno.writeTextFile(file, yaml);
    const exp = compileExperiment(file, yaml, {
      kinds: [redesignKind, diagnoseKind],
    });
    const store = new Store(join(dir, "cache"));
    const result = await runPlan(makePlan(exp, store), store, {
      jobs: 2,
      manifestEveryMs: 20,
    });
    // The key was really sent to the endpoint...
    assert.ok(seen.length >= 2);
    assert.ok(seen.every((h) => h === `Bearer ${SENTINEL}`));
    // ...the good node succeeded and the bad one failed with a message naming the variable.
    const text = JSON.stringify(result);
    assert.match(text, /401/);
    assert.match(text, new RegExp(VAR));
    // ...and nothing written under the project directory contains it.
    let files = 0;
    const needles = [SENTINEL, "SENTINEL-c0ffee"];
    for await (const path of walk(dir)) {
      files++;
      const bytes = await Deno.readFile(path);
      const body = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
      for (const n of needles) {
        assert.ok(!body.includes(n), `key found in ${path}`);
      }
    }
    assert.ok(files >= 4, `only ${files} files written`);
    if (Deno.env.get("SHOW")) {
      for await (const p of walk(dir)) console.log(p.slice(dir.length));
    }
    assert.ok(!text.includes(SENTINEL));
  } finally {
    Deno.env.delete(VAR);
    await Deno.remove(dir, { recursive: true });
  }
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* walk(p);
    else if (e.isFile) yield p;
  }
}

Deno.test("redesign kind with a GGUF model file: the file's digest enters the key, never a path from the environment; the report tallies the llm", async () => {
  await withModelDir("envsmith-redesign-gguf-", async (dir) => {
    const a = join(dir, "a.gguf"), copy = join(dir, "copy.gguf");
    const b = join(dir, "b.gguf");
    await writeRandomGguf(a, { seed: 1 });
    await Deno.copyFile(a, copy);
    await writeRandomGguf(b, { seed: 2 });
    const fp = (path: string) => {
      Deno.env.set("ENVSMITH_TEST_GGUF", path);
      try {
        return redesignKind.fingerprint!({
          engineer: { name: "llm", llm: { gguf_env: "ENVSMITH_TEST_GGUF" } },
        }, { baseDir: dir });
      } finally {
        Deno.env.delete("ENVSMITH_TEST_GGUF");
      }
    };
    assert.deepEqual(fp(a), fp(copy));
    assert.notDeepEqual(fp(a), fp(b));
    assert.ok(!JSON.stringify(fp(a)).includes(dir));
    assert.deepEqual(fp(a), {
      prompts: promptDigest("neutral"),
      endpoint: { gguf_sha256: await ggufDigest(a) },
    });
    // The informed prompt is another key.
    assert.notDeepEqual(
      redesignKind.fingerprint!({
        engineer: { name: "llm", prompt: "informed" },
      }, { baseDir: dir }),
      redesignKind.fingerprint!({ engineer: { name: "llm" } }, {
        baseDir: dir,
      }),
    );
    // A relative `gguf:` resolves against the experiment file's directory.
    const logs: string[] = [];
    const params = v.parse(RedesignParamsSchema, {
      engineer: {
        name: "llm",
        llm: { gguf: "a.gguf", temperature: 1, seed: 4, context_size: 8192 },
        reasks: 0,
      },
      context: "none",
      config: easy,
    });
    const out = await redesignKind.run(params, fakeCtx(dir, logs));
    const report = out.report as Record<string, unknown>;
    assert.equal(report.prompt, "neutral");
    assert.match(String(report.model), /^a\.gguf sha256:[0-9a-f]{12}$/);
    const llm = report.llm as Record<string, number>;
    assert.equal(llm.calls, 1);
    assert.equal(llm.requests, 1);
    assert.equal(llm.reasks, 0);
    // Random weights: the reply may ask for what the generator cannot
    // realise; then the node keeps the current config and says so.
    const events = (report.events as { type: string }[]).map((e) => e.type);
    assert.equal(llm.fallback, events.includes("fallback") ? 1 : 0);
    if (llm.fallback === 1) {
      assert.equal(configId(parseEnvConfig(out.value)), configId(easy));
    } else parseEnvConfig(out.value);
  });
});

Deno.test("redesign: engineer { name, ...parameters } carries its own inputs; scripted and blind controls read no context", async () => {
  const parse = (x: unknown) => v.parse(RedesignParamsSchema, x);
  // a scripted control: proposes its script, whatever the findings say
  const scripted = await redesign(
    parse({
      engineer: { name: "scripted", script: { preset: "hard" } },
      context: "full",
      config: easy,
      findings: findings(0.1),
    }),
    1,
  );
  assert.equal(configId(scripted.config), configId(PRESETS.hard));
  assert.equal(scripted.report.engineer, "scripted");
  assert.deepEqual(scripted.report.reads, []);
  // a blind control: the informed run took 2 agent steps; blind takes 2
  // steps along the least developed dimensions of its own config
  const blind = await redesign(
    parse({
      engineer: {
        name: "blind",
        pace: [easy, { ...easy, agents: easy.agents + 4 }],
      },
      config: easy,
      findings: findings(0.9),
    }),
    1,
  );
  assert.match(
    blind.rationale,
    /informed pace \+2; agents \+1, interaction \+1/,
  );
  // the engineer object's parameters win over the node's
  const ruled = await redesign(
    parse({
      engineer: { name: "rules", context: "none" },
      context: "stats",
      config: easy,
      findings: findings(0.99),
    }),
    1,
  );
  assert.equal(ruled.report.context, "none");
  assert.match(ruled.rationale, /blind-schedule/);
  // a scripted engineer without a script says what to give
  const noScript = v.safeParse(RedesignParamsSchema, {
    engineer: "scripted",
    config: easy,
  });
  assert.ok(!noScript.success);
  assert.match(
    noScript.issues[0]!.message,
    /the scripted engineer needs script: write engineer: \{ name: scripted, script: \.\.\. \}/,
  );
  await assert.rejects(
    () => redesign({ engineer: "scripted", config: easy }, 1),
    /missing script/,
  );
  assert.ok(
    !v.safeParse(RedesignParamsSchema, {
      engineer: { name: "rules", contxt: "none" },
      config: easy,
    }).success,
  );
});

Deno.test("redesign: the default context is full (history included); the node's context and the engineer block's override it, the block's winning", async () => {
  const f = findings(0.5);
  const given = {
    engineer: "rules",
    config: easy,
    findings: f,
    history: [f],
    stage: 1,
  };
  const fullText = buildContext("full", f, easy, {
    history: historyFrom([f]),
    stage: 1,
  }).text;
  const byDefault = await redesign(v.parse(RedesignParamsSchema, given), 1);
  assert.equal(byDefault.report.context, "full");
  assert.equal(byDefault.report.context_chars, fullText.length);
  const stats = await redesign(
    v.parse(RedesignParamsSchema, { ...given, context: "stats" }),
    1,
  );
  assert.equal(stats.report.context, "stats");
  assert.ok((stats.report.context_chars as number) < fullText.length);
  const block = await redesign(
    v.parse(RedesignParamsSchema, {
      ...given,
      context: "stats",
      engineer: { name: "rules", context: "none" },
    }),
    1,
  );
  assert.equal(block.report.context, "none");
});
