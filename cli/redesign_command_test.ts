import assert from "node:assert/strict";
import { join } from "node:path";
import { UserError } from "@envsmith/engine/errors";
import { startStubServer } from "../llm/stub_server.ts";
import { disposeLocalModels } from "../llm/local.ts";
import { writeRandomGguf } from "../llm/random_gguf.ts";
import {
  configId,
  isMixture,
  parseEnvConfig,
  PRESETS,
} from "../schemas/mod.ts";
import { diagnose } from "../engineer/mod.ts";
import { NO_CONFIG_EXIT, redesignCommand } from "./redesign_command.ts";

/** The cache of the current test (set by withTmp; the tests of a file run one at a time). */
let cache: string | undefined;

/**
 * Runs the subcommand with the test's cache and, when given, environment
 * (never the process-wide ENVSMITH_CACHE or ENVSMITH_LLM_GGUF: test files
 * run in parallel in one process, and other files read those).
 */
async function run(
  args: string[],
  env?: Readonly<Record<string, string>>,
) {
  const out: string[] = [];
  const err: string[] = [];
  let code = 0;
  const cmd = redesignCommand({
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    ...(cache !== undefined ? { cache } : {}),
    ...(env ? { env: (n: string) => env[n] ?? Deno.env.get(n) } : {}),
  }, (c) => (code = c));
  cmd.exitOverride();
  await cmd.parseAsync(args, { from: "user" });
  return { out: out.join("\n"), err: err.join("\n"), code };
}

async function withTmp(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-redesign-cli-" });
  cache = join(dir, "cache");
  try {
    await fn(dir);
  } finally {
    cache = undefined;
    await Deno.remove(dir, { recursive: true });
  }
}

function findingsFile(dir: string, success: number, withConfig = true): string {
  const f = {
    ...diagnose([], { seed: 1, config: PRESETS.easy }),
    episodes: 50,
    success_rate: success,
  };
  if (!withConfig) f.config = null;
  const path = join(dir, `findings-${success}-${withConfig}.json`);
  Deno.writeTextFileSync(path, JSON.stringify(f));
  return path;
}

Deno.test("cli redesign: rules prints the next config on stdout and the rationale on stderr", async () => {
  await withTmp(async (dir) => {
    const r = await run([
      "--engineer",
      "rules",
      "--context",
      "stats",
      "--preset",
      "easy",
      "--findings",
      findingsFile(dir, 0.9),
      "--report",
      join(dir, "report.json"),
    ]);
    assert.equal(r.code, 0);
    const next = parseEnvConfig(JSON.parse(r.out));
    assert.ok(isMixture(next));
    assert.match(r.err, /^rules engineer \(context stats\): harden-mastered/);
    assert.match(r.err, /\[rule\] harden-mastered/);
    const report = JSON.parse(
      await Deno.readTextFile(join(dir, "report.json")),
    );
    assert.equal(report.diff.changed, true);
  });
});

Deno.test("cli redesign: user mistakes are UserErrors with the fix", async () => {
  await withTmp(async (dir) => {
    await assert.rejects(
      () =>
        run(["--engineer", "rules", "--context", "stats", "--preset", "easy"]),
      (e) => e instanceof UserError && /--findings is required/.test(e.message),
    );
    await assert.rejects(
      () =>
        run(["--engineer", "rules", "--context", "none", "--preset", "tiny"]),
      (e) => e instanceof UserError && /Unknown preset "tiny"/.test(e.message),
    );
    await assert.rejects(
      () => run(["--engineer", "llm", "--context", "none", "--preset", "easy"]),
      (e) => e instanceof UserError && /--base-url/.test(e.message),
    );
    const bad = join(dir, "bad.json");
    await Deno.writeTextFile(bad, '{"version": 1}');
    await assert.rejects(
      () => run(["--engineer", "rules", "--preset", "easy", "--findings", bad]),
      (e) => e instanceof UserError && /Invalid findings/.test(e.message),
    );
  });
});

Deno.test("cli redesign llm: valid reply, endpoint down with a config to keep, and no config to keep", async () => {
  await withTmp(async (dir) => {
    const key = "sk-cli-SENTINEL-99";
    Deno.env.set("ENVSMITH_CLI_TEST_KEY", key);
    try {
      await using stub = startStubServer([
        {
          reply:
            '```json\n{"rationale": "crowd them", "config": {"preset": "easy", "agents": 4}}\n```',
        },
        { reply: "no idea" },
        { reply: "still no idea" },
        { reply: "{broken" },
      ]);
      const common = [
        "--engineer",
        "llm",
        "--base-url",
        stub.baseURL,
        "--model",
        "m",
        "--max-retries",
        "0",
      ];
      const ok = await run([
        ...common,
        "--api-key-env",
        "ENVSMITH_CLI_TEST_KEY",
        "--context",
        "failures",
        "--preset",
        "easy",
        "--findings",
        findingsFile(dir, 0.4),
        "--report",
        join(dir, "r.json"),
      ]);
      assert.equal(ok.code, 0);
      assert.equal(JSON.parse(ok.out).agents, 4);
      assert.match(ok.err, /llm engineer: crowd them/);
      // Three unusable replies and no config anywhere: non-zero exit, nothing on stdout.
      const none = await run([
        ...common,
        "--context",
        "stats",
        "--findings",
        findingsFile(dir, 0.4, false),
      ]);
      assert.equal(none.code, NO_CONFIG_EXIT);
      assert.equal(none.out, "");
      assert.match(
        none.err,
        /no usable reply from the LLM and no current config to keep/,
      );
      // Nothing written contains the key.
      for await (const p of walk(dir)) {
        assert.ok(!(await Deno.readTextFile(p)).includes("SENTINEL"), p);
      }
    } finally {
      Deno.env.delete("ENVSMITH_CLI_TEST_KEY");
    }
    // Endpoint down, but a config to keep: exit 0 with the kept config.
    const down = startStubServer([]);
    const url = down.baseURL;
    await down.close();
    const kept = await run([
      "--engineer",
      "llm",
      "--base-url",
      url,
      "--model",
      "m",
      "--max-retries",
      "0",
      "--context",
      "stats",
      "--preset",
      "medium",
      "--findings",
      findingsFile(dir, 0.4),
    ]);
    assert.equal(kept.code, 0);
    assert.equal(configId(JSON.parse(kept.out)), configId(PRESETS.medium));
    assert.match(kept.err, /\[llm_error\] Cannot reach/);
  });
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* walk(p);
    else if (e.isFile) yield p;
  }
}

/** The llm engineer without context, asked for an easy config. */
const LLM_EASY = ["--engineer", "llm", "--context", "none", "--preset", "easy"];

Deno.test("cli redesign: --gguf FILE and ENVSMITH_LLM_GGUF run a local model (no server) and print an in-bounds config", async () => {
  await withTmp(async (dir) => {
    const gguf = join(dir, "tiny.gguf");
    await writeRandomGguf(gguf, { seed: 5 });
    try {
      const flag = await run([
        ...LLM_EASY,
        "--gguf",
        gguf,
        "--temperature",
        "1",
        "--llm-seed",
        "2",
      ]);
      assert.equal(flag.code, 0, flag.err);
      parseEnvConfig(JSON.parse(flag.out));
      assert.doesNotMatch(flag.err, /\[fallback\]/);
      const fromEnv = await run([
        ...LLM_EASY,
        "--temperature",
        "1",
        "--llm-seed",
        "2",
      ], { ENVSMITH_LLM_GGUF: gguf });
      // Same file, same request: the reply comes from the reply cache.
      assert.equal(fromEnv.out, flag.out);
      assert.match(fromEnv.err, /\[cached\]/);
      const missing = await run([
        ...LLM_EASY,
        "--gguf",
        join(dir, "missing.gguf"),
      ]).catch((e) => e);
      assert.ok(missing instanceof UserError);
      assert.match(missing.message, /does not exist/);
      // A truncated model is an error (exit 2), not a fallback config.
      const bytes = Deno.readFileSync(gguf);
      const cut = join(dir, "cut.gguf");
      Deno.writeFileSync(cut, bytes.subarray(0, bytes.length >> 1));
      const truncated = await run([
        ...LLM_EASY,
        "--gguf",
        cut,
      ]).catch((e) => e);
      assert.ok(truncated instanceof UserError, String(truncated));
      assert.match(
        truncated.message,
        /cut\.gguf is not a loadable GGUF model: .*truncated/,
      );
    } finally {
      await disposeLocalModels();
    }
  });
});
