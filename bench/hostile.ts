/**
 * Hostile input on the model server and on declared inputs: each case runs
 * the server (`serve-llm` on a random-weight GGUF) or `plan` in a process
 * of its own under `/usr/bin/time`, and prints its answer, wall time and
 * peak memory (the process's maximum resident set). `docs/faults.md`
 * records the numbers before and after the limits.
 *
 * Run: `deno run -A bench/hostile.ts [ROOT] [CAP_SECONDS] [CASE...]`
 * (ROOT: the checkout whose code runs, default this one; CAP_SECONDS:
 * a case still running after it is stopped and reported as such, default
 * 30; CASE: run only the cases whose names start with it).
 *
 * @module
 */
import { join, resolve } from "node:path";
import { writeRandomGguf } from "../llm/random_gguf.ts";

const ROOT = resolve(Deno.args[0] ?? join(import.meta.dirname!, ".."));
const CAP_S = Number(Deno.args[1] ?? 30);
const ONLY = Deno.args.slice(2);

interface Measured {
  readonly name: string;
  readonly answer: string;
  readonly seconds: number;
  readonly peakMb: number;
}

/**
 * Starts `args` (a deno program of ROOT) under `timeout` (which kills it
 * at the cap); its peak resident set is read from `/proc` (VmHWM) while it
 * runs.
 */
function _timed(args: string[], cwd: string) {
  const child = new Deno.Command("timeout", {
    args: ["-s", "KILL", String(CAP_S), Deno.execPath(), ...args],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let program = 0, peakKb = 0;
  const poll = setInterval(() => {
    try {
      program ||= Number(
        Deno.readTextFileSync(`/proc/${child.pid}/task/${child.pid}/children`)
          .trim().split(/\s+/)[0],
      );
      const m = /VmHWM:\s+(\d+)/.exec(
        Deno.readTextFileSync(`/proc/${program}/status`),
      );
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch { /* not started yet, or gone */ }
  }, 25);
  child.status.finally(() => clearInterval(poll));
  /** Stops the program (SIGTERM; timeout passes it on). */
  const stop = () => {
    try {
      Deno.kill(child.pid, "SIGTERM");
    } catch { /* gone */ }
  };
  return { child, peakMb: () => peakKb / 1024, stop };
}

async function _firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  reader.releaseLock();
  // keep draining so the child never blocks on a full pipe
  stream.pipeTo(new WritableStream()).catch(() => {});
  return text.split("\n")[0]!;
}

/** One server case: start serve-llm, send what `send` sends, stop the server. */
async function _serverCase(
  dir: string,
  gguf: string,
  name: string,
  send: (base: string) => Promise<string>,
): Promise<Measured> {
  const { child, peakMb, stop } = _timed([
    "run",
    "-A",
    join(ROOT, "llm/serve_llm_command.ts"),
    "--gguf",
    gguf,
    "--threads",
    "1",
    "--context-size",
    "8192",
  ], dir);
  child.stderr.pipeTo(new WritableStream()).catch(() => {});
  const line = await _firstLine(child.stdout);
  const m = /(http:\/\/\S+\/v1)/.exec(line);
  if (!m) throw new Error(`serve-llm did not start: ${line}`);
  const t0 = performance.now();
  let answer: string;
  try {
    answer = await send(m[1]!);
  } catch (e) {
    answer = `no answer: ${(e as Error).message}`;
  }
  const seconds = (performance.now() - t0) / 1000;
  stop();
  await child.status;
  return { name, answer, seconds, peakMb: peakMb() };
}

async function _post(
  base: string,
  body: string,
  signal?: AbortSignal,
): Promise<string> {
  const res = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    signal: signal ?? AbortSignal.timeout(CAP_S * 1000),
  });
  const text = await res.text();
  let message = text.slice(0, 160);
  try {
    const j = JSON.parse(text);
    message = j.error?.message?.slice(0, 160) ??
      `${j.usage?.completion_tokens} tokens`;
  } catch { /* not JSON */ }
  return `${res.status} ${message}`;
}

const hi = [{ role: "user", content: "hi" }];

let _bigBody: string | undefined;
/** The 100 MB body, built before the server starts (not timed). */
function _big(): string {
  return _bigBody ??= `{"messages":[{"role":"user","content":"${
    "x".repeat(100 * 1024 * 1024)
  }"}],"max_tokens":1}`;
}
const schemaBody = (schema: unknown) =>
  JSON.stringify({
    messages: hi,
    max_tokens: 16,
    response_format: {
      type: "json_schema",
      json_schema: { name: "x", schema },
    },
  });

const SERVER_CASES: Record<string, (base: string) => Promise<string>> = {
  "server-body-100MB": (base) => _post(base, _big()),
  // the same Content-Length, the body's first 64 KiB sent, then waiting for
  // the answer: the server's own time, without the client's upload
  "server-body-100MB-declared": async (base) => {
    const url = new URL(base);
    const conn = await Deno.connect({
      hostname: url.hostname,
      port: Number(url.port),
    });
    const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: ${url.host}\r\n` +
      `content-type: application/json\r\ncontent-length: ${
        100 * 1024 * 1024
      }\r\n\r\n`;
    await conn.write(new TextEncoder().encode(head));
    await conn.write(new Uint8Array(64 * 1024).fill(0x20));
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    conn.close();
    const text = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    const status = text.split(" ")[1];
    const m = /"message":"([^"]{0,160})/.exec(text);
    return `${status} ${m?.[1] ?? ""}`;
  },
  "server-prompt-3MB": (base) =>
    _post(
      base,
      JSON.stringify({
        messages: [{ role: "user", content: "x".repeat(3 * 1024 * 1024) }],
        max_tokens: 1,
      }),
    ),
  "server-minimum-1e-300": (base) =>
    _post(
      base,
      schemaBody({
        type: "object",
        properties: { x: { type: "number", minimum: 1e-300, maximum: 1 } },
        required: ["x"],
      }),
    ),
  "server-enum-300000": (base) =>
    _post(
      base,
      schemaBody({ enum: Array.from({ length: 300_000 }, (_, i) => i) }),
    ),
  "server-depth-100000": (base) => {
    const depth = 100_000;
    const schema = '{"type":"array","items":'.repeat(depth) +
      '{"type":"null"}' + "}".repeat(depth);
    return _post(
      base,
      `{"messages":[{"role":"user","content":"hi"}],"max_tokens":4,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${schema}}}}`,
    );
  },
  "server-client-leaves": async (base) => {
    // A long generation whose client goes away after 1 s, then a short
    // request: how long it waits says whether the first was abandoned.
    const gone = new AbortController();
    // (a grammar of exactly 6,000 characters: no early end of the reply)
    const first = _post(
      base,
      JSON.stringify({
        messages: hi,
        max_tokens: 7000,
        temperature: 1,
        response_format: {
          type: "json_schema",
          json_schema: {
            name: "long",
            schema: {
              type: "array",
              items: { type: "string", minLength: 1000, maxLength: 1000 },
              minItems: 6,
              maxItems: 6,
            },
          },
        },
      }),
      gone.signal,
    ).catch(() => "aborted by the client");
    await new Promise((r) => setTimeout(r, 1000));
    gone.abort();
    const was = await first;
    const t0 = performance.now();
    const next = await _post(
      base,
      JSON.stringify({ messages: hi, max_tokens: 4 }),
    );
    return `first: ${was}; next: ${next} after ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s`;
  },
};

/** One `plan` case: an experiment whose exec node (or engineer) declares `input`. */
async function _planCase(
  dir: string,
  name: string,
  make: (dir: string) => Promise<void>,
  engineer: boolean,
  limits: string[] = [],
): Promise<Measured> {
  const d = join(dir, name);
  await Deno.mkdir(d, { recursive: true });
  await make(d);
  await Deno.writeTextFile(
    join(d, "exp.yaml"),
    engineer
      ? `experiment: h
seed: 1
nodes:
  config:
    kind: redesign
    with:
      engineer: { name: exec, command: [/bin/cat], inputs: [data] }
      context: stats
      config: { preset: easy }
      findings: { success_rate: 0.5 }
`
      : `experiment: h
seed: 1
nodes:
  x: { kind: exec, with: { command: /bin/true, inputs: [data] } }
`,
  );
  const { child, peakMb } = _timed([
    "run",
    "-A",
    join(ROOT, "cli.ts"),
    "--cache",
    join(d, "cache"),
    ...limits,
    "plan",
    join(d, "exp.yaml"),
  ], d);
  const t0 = performance.now();
  const out = await child.output();
  const seconds = (performance.now() - t0) / 1000;
  const err = new TextDecoder().decode(out.stderr).trim().split("\n");
  err.push(...new TextDecoder().decode(out.stdout).trim().split("\n"));
  const answer = seconds >= CAP_S - 0.5
    ? `still running after ${CAP_S} s (stopped)`
    : `exit ${out.code}: ${err.filter((l) => l).at(-1)?.slice(0, 200)}`;
  return { name, answer, seconds, peakMb: peakMb() };
}

const twoGb = async (d: string) => {
  const f = await Deno.open(join(d, "data"), { write: true, create: true });
  await f.truncate(2 * 1024 * 1024 * 1024);
  f.close();
};

/** The input `data` is a link to the endless /dev/zero. */
const devZero = (d: string) => Deno.symlink("/dev/zero", join(d, "data"));
/** The input `data` is a named pipe nobody writes to. */
const fifo = async (d: string) => {
  await new Deno.Command("mkfifo", { args: [join(d, "data")] }).output();
};

const PLAN_CASES: Record<
  string,
  [(d: string) => Promise<void>, boolean, string[]?]
> = {
  "exec-kind-dev-zero": [devZero, false],
  "exec-kind-dev-urandom": [
    (d) => Deno.symlink("/dev/urandom", join(d, "data")),
    false,
  ],
  "exec-kind-fifo": [fifo, false],
  "exec-kind-2GB-file": [twoGb, false],
  // hashed when the limit is raised: streamed, memory stays flat
  "exec-kind-2GB-file-limit-raised": [twoGb, false, [
    "--limit",
    "input-bytes=4G",
  ]],
  "exec-engineer-dev-zero": [devZero, true],
  "exec-engineer-fifo": [fifo, true],
};

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-hostile-" });
  const pick = (n: string) =>
    ONLY.length === 0 || ONLY.some((o) => n.startsWith(o));
  try {
    const gguf = join(dir, "tiny.gguf");
    await writeRandomGguf(gguf, { seed: 1 });
    console.log(`code: ${ROOT}; cap ${CAP_S} s`);
    console.log("| case | answer | wall s | peak MB |");
    console.log("| --- | --- | ---: | ---: |");
    const show = (m: Measured) =>
      console.log(
        `| ${m.name} | ${m.answer.replaceAll("|", "\\|")} | ${
          m.seconds.toFixed(2)
        } | ${m.peakMb.toFixed(0)} |`,
      );
    if (pick("server-body")) _big();
    for (const [name, send] of Object.entries(SERVER_CASES)) {
      if (pick(name)) show(await _serverCase(dir, gguf, name, send));
    }
    for (const [name, [make, engineer, limits]] of Object.entries(PLAN_CASES)) {
      if (pick(name)) show(await _planCase(dir, name, make, engineer, limits));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
