// `serve:` of the llm engineer: each redesign starts a model server, asks
// it over HTTP, and stops it (the whole process group) on success, on error
// and on timeout; mistakes are refused at plan.
import { scaledMs } from "../engine/testdata/load.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { configId, PRESETS } from "../schemas/mod.ts";
import { LlmHttpError } from "../llm/errors.ts";
import { groupAlive, LlmServeError } from "../llm/served_process.ts";
import { FAKE_SERVER, groupMembers, pgidOf } from "../llm/_served_testing.ts";
import { writeRandomGguf } from "../llm/random_gguf.ts";
import { buildContext } from "./context.ts";
import { diagnose } from "./diagnose.ts";
import {
  CUT_OFF_TWICE_LLM_STATS,
  slipHoleEpisode,
  successEpisode,
} from "./_fixtures.ts";
import { EngineerConfigError, type EngineerEnv } from "./engineer_kind.ts";
import { engineer } from "./llm.ts";
import { withModelDir } from "../llm/_local_testing.ts";

const easy = PRESETS.easy;
const findings = diagnose([successEpisode(), slipHoleEpisode()], {
  seed: 1,
  config: easy,
});
const context = buildContext("full", findings, easy, { history: [] });

function envOf(dir: string, log: string[]): EngineerEnv {
  return {
    baseDir: dir,
    auxDir: join(dir, "aux"),
    log: (l) => log.push(l),
    env: () => undefined,
  };
}

/** The fingerprint's plan-time refusal of `params`, as one line. */
function refusal(params: Record<string, unknown>, baseDir: string): string {
  try {
    engineer.fingerprint!(params, { baseDir });
  } catch (e) {
    assert.ok(e instanceof EngineerConfigError, String(e));
    assert.ok(!e.message.includes("\n"), e.message);
    return e.message;
  }
  assert.fail(`not refused: ${JSON.stringify(params)}`);
}

Deno.test("llm engineer serve: refused at plan, one line naming the field and the fix", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-serve-plan-" });
  try {
    const gguf = join(dir, "tiny.gguf");
    await writeRandomGguf(gguf, { seed: 1 });
    await Deno.writeTextFile(join(dir, "notes.gguf"), "not a model");
    const serve = { gguf: "tiny.gguf" };
    const cmd = (command: string[], more: Record<string, unknown> = {}) => ({
      serve: { command, ...more },
    });
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { serve, llm: { base_url: "http://127.0.0.1:8000/v1", model: "m" } },
        /^engineer\.llm\.base_url: serve starts the server, so llm names none; remove llm\.base_url/,
      ],
      [
        { serve, llm: { base_url_env: "URL", model: "m" } },
        /^engineer\.llm\.base_url_env: serve starts the server/,
      ],
      [
        { serve, llm: { gguf: "tiny.gguf" } },
        /^engineer\.llm\.gguf: serve starts the server, so llm names none; remove llm\.gguf \(or remove serve to use the model file in process\)/,
      ],
      [
        { serve, llm: { threads: 2 } },
        /^engineer\.llm\.threads: with serve it belongs to the server: write serve\.threads/,
      ],
      [
        { serve: { gguf: "missing.gguf" } },
        /^engineer\.serve\.gguf: The GGUF model file \S*missing\.gguf does not exist/,
      ],
      [
        { serve: { gguf: "notes.gguf" } },
        /^engineer\.serve\.gguf: .*not a GGUF model file/,
      ],
      [
        { serve: { gguf: "tiny.gguf", command: ["sh", "{port}"] } },
        /^engineer\.serve: give gguf \(envsmith's own server\) or command \(your server\), not both/,
      ],
      [
        cmd(["envsmith-no-such-server", "--port", "{port}"]),
        /^engineer\.serve\.command: "envsmith-no-such-server" is not on PATH; install it, or give its full path/,
      ],
      [
        cmd(["./bin/server", "--port", "{port}"]),
        /^engineer\.serve\.command: "\.\/bin\/server" is not an executable file/,
      ],
      [
        cmd(["sh", "-c", "serve --port 8000"]),
        /^engineer\.serve\.command must contain "\{port\}"/,
      ],
      [
        cmd(["sh", "{model}", "{port}"], { model: "models/qwen3-4b" }),
        /^engineer\.serve\.model: models\/qwen3-4b does not exist; give a model file or directory/,
      ],
      [
        cmd(["sh", "{port}"], { model: "tiny.gguf" }),
        /^engineer\.serve\.model is given but serve\.command has no "\{model\}"/,
      ],
      [
        cmd(["sh", "{port}"], { threads: 2 }),
        /^engineer\.serve\.threads applies to envsmith's own server/,
      ],
    ];
    for (const [params, message] of cases) {
      assert.match(refusal(params, dir), message);
    }
    // what passes: the served model's identity is in the fingerprint, no port
    const ok = engineer.fingerprint!({ serve, llm: { max_tokens: 64 } }, {
      baseDir: dir,
    }) as { served: Record<string, string> };
    assert.match(ok.served.gguf_sha256!, /^[0-9a-f]{64}$/);
    const byCommand = engineer.fingerprint!(
      cmd(["sh", "-c", "x", "{model}", "{port}"], { model: "tiny.gguf" }),
      { baseDir: dir },
    ) as { served: Record<string, string> };
    assert.equal(byCommand.served.model_sha256, ok.served.gguf_sha256);
    assert.ok(!JSON.stringify([ok, byCommand]).includes("port"));
    // request settings without serve name no endpoint: refused when the
    // redesign starts (at plan they look like llm: { gguf: $policy.gguf,
    // max_tokens }, whose reference is absent there)
    assert.throws(
      () => engineer.create({ llm: { max_tokens: 48 } }, envOf(dir, [])),
      (e: unknown) =>
        e instanceof EngineerConfigError &&
        /^engineer\.llm: give a server .* or add serve: \{ gguf: \$policy\.gguf \} to start a server$/
          .test(e.message),
    );
    // a node reference ($policy.gguf) is absent at plan: nothing to refuse yet
    assert.deepEqual(
      Object.keys(
        engineer.fingerprint!({ serve: { threads: 1 } }, {
          baseDir: dir,
        }) as object,
      ),
      ["prompts", "served"],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("llm engineer serve: a redesign against envsmith's server on a random GGUF; the server is gone afterwards; a rerun replays without starting it", async () => {
  await withModelDir("envsmith-serve-e2e-", async (dir) => {
    await writeRandomGguf(join(dir, "tiny.gguf"), { seed: 1 });
    const params = {
      serve: { gguf: "tiny.gguf", threads: 1 },
      llm: { max_tokens: 48 },
      reasks: 1,
    };
    const log: string[] = [];
    const t0 = performance.now();
    const p = await engineer.create(params, envOf(dir, log)).propose({
      context,
      config: easy,
      seed: 1,
    });
    const ms = performance.now() - t0;
    console.log(`redesign with a served model: ${(ms / 1000).toFixed(1)} s`);
    console.log(log.filter((l) => /ready|stopped/.test(l)).join("\n"));
    // the requests reached the server (48 tokens cut the reply: re-asked, then kept)
    assert.equal(p.usage!.requests, 2);
    assert.ok(p.usage!.promptTokens > 1000, `${p.usage!.promptTokens}`);
    assert.equal(p.usage!.completionTokens, 96);
    assert.deepEqual(p.llm, CUT_OFF_TWICE_LLM_STATS);
    assert.equal(configId(p.config), configId(easy));
    assert.match(
      String(p.report!.model),
      /^tiny\.gguf sha256:[0-9a-f]{12} \(served\)$/,
    );
    assert.match(
      log.join("\n"),
      /serve stdout: serve-llm: http:\/\/127\.0\.0\.1:\d+\/v1 \(model tiny\.gguf, 1 thread/,
    );
    assert.match(log.join("\n"), /--threads 1/);
    const pgid = pgidOf(log);
    assert.equal(groupAlive(pgid), false);
    assert.deepEqual(groupMembers(pgid), []);

    // same request again: from the reply cache (keyed without the port),
    // and no server is started
    const again: string[] = [];
    const q = await engineer.create(params, envOf(dir, again)).propose({
      context,
      config: easy,
      seed: 1,
    });
    assert.equal(q.llm!.cached, 2);
    assert.deepEqual(again, []);
    // offline: a request never made is a cache miss, nothing starts
    const offline: string[] = [];
    await assert.rejects(
      () =>
        engineer.create(
          { ...params, llm: { max_tokens: 48, offline: true, seed: 9 } },
          envOf(dir, offline),
        ).propose({ context, config: easy, seed: 1 }),
      /not in the reply cache/,
    );
    assert.deepEqual(offline, []);
  });
});

Deno.test("llm engineer serve: a command's server is stopped when the chat fails and when it never gets ready", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-serve-cmd-" });
  try {
    await Deno.writeTextFile(join(dir, "fake.ts"), FAKE_SERVER);
    await Deno.mkdir(join(dir, "checkpoint"));
    // {port} and {model} are filled in; the fake lists the model it was given
    const log: string[] = [];
    const failing = engineer.create({
      serve: {
        command: [Deno.execPath(), "run", "-A", "fake.ts", "{port}", "{model}"],
        model: "checkpoint",
      },
      llm: { max_retries: 0 },
    }, { ...envOf(dir, log) });
    await assert.rejects(
      () => failing.propose({ context, config: easy, seed: 1 }),
      (e: unknown) => {
        assert.ok(e instanceof LlmHttpError, String(e));
        assert.equal(e.status, 500);
        assert.equal(e.model, join(dir, "checkpoint"));
        return true;
      },
    );
    assert.deepEqual(groupMembers(pgidOf(log)), []);

    const slow: string[] = [];
    const t0 = performance.now();
    await assert.rejects(
      () =>
        engineer.create({
          serve: {
            command: [
              "sh",
              "-c",
              "echo loading weights >&2; sleep 600",
              "{port}",
            ],
            ready_timeout_s: 1,
          },
        }, envOf(dir, slow)).propose({ context, config: easy, seed: 1 }),
      (e: unknown) => {
        assert.ok(e instanceof LlmServeError, String(e));
        assert.match(e.message, /within 1 s \(serve\.ready_timeout_s\)/);
        assert.match(e.message, /its stderr ends:\nloading weights/);
        return true;
      },
    );
    assert.ok(performance.now() - t0 < scaledMs(15_000));
    assert.deepEqual(groupMembers(pgidOf(slow)), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
