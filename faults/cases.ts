/**
 * The catalogue of bad inputs of the fault suite: files and command lines a
 * hostile or unlucky user could give, each with the exit code and the
 * message expected. Every case must end within 10 s and 500 MB, print a
 * few lines and no stack trace ({@linkcode checkCase}); the suite
 * (`faults_test.ts`) and the benchmark (`bench/faults.ts`) run all of them.
 *
 * @module
 */
import { join } from "node:path";
import { hasStackTrace, probe, type ProbeResult } from "./probe.ts";

/** One bad input. */
export interface FaultCase {
  /** Short name. */
  readonly name: string;
  /** The issue-12 item it comes from (1: unbounded input, 2: stack trace, ...). */
  readonly item: number;
  /** Writes the case's files into `dir`. */
  readonly setup: (dir: string) => Promise<void>;
  /** The CLI arguments (the cache is `DIR/cache`). */
  readonly args: (dir: string) => string[];
  /** Expected exit code. */
  readonly code: number;
  /** Expected in stderr (or stdout). */
  readonly message: RegExp;
  /** At most this many lines on stderr. @default 4 */
  readonly maxLines?: number;
}

const HEAD = "experiment: bad\nseed: 1\n";

function _yaml(body: string): (dir: string) => Promise<void> {
  return (dir) => Deno.writeTextFile(join(dir, "exp.yaml"), HEAD + body);
}

const _plan = (dir: string) => [
  "--cache",
  join(dir, "cache"),
  "plan",
  join(dir, "exp.yaml"),
];
const _run = (dir: string) => [
  "--cache",
  join(dir, "cache"),
  "run",
  join(dir, "exp.yaml"),
];

function _stages(count: string): string {
  return `nodes:\n  s:\n    kind: stages\n    count: ${count}\n    each:\n      a: { kind: test.add, with: { a: $stage } }\n`;
}

function _matrix(axes: number, values: number): string {
  const vals = Array.from({ length: values }, (_, i) => i).join(", ");
  const names = Array.from({ length: axes }, (_, i) => `a${i}`);
  return `matrix:\n${
    names.map((n) => `  ${n}: [${vals}]`).join("\n")
  }\nnodes:\n  x: { kind: test.add, with: { a: 1, note: [${
    names.map((n) => `$matrix.${n}`).join(", ")
  }] } }\n`;
}

async function _bigYaml(dir: string, bytes: number): Promise<void> {
  const f = await Deno.open(join(dir, "exp.yaml"), {
    create: true,
    write: true,
    truncate: true,
  });
  const enc = new TextEncoder();
  await f.write(enc.encode(HEAD + "nodes:\n"));
  const chunk = enc.encode(
    Array.from(
      { length: 1000 },
      (_, i) => `  n${i}: { kind: test.add, with: { a: ${i} } }\n`,
    ).join(""),
  );
  for (let n = 0; n < bytes; n += chunk.length) await f.write(chunk);
  f.close();
}

/** An alias bomb: 9^6 leaves from 7 short lines. */
const _BOMB = "nodes: {}\n" + ["a: &a [x, x, x, x, x, x, x, x, x]"].concat(
  "bcdefg".split("").map((k, i) =>
    `${k}: &${k} [${Array(9).fill("*" + "abcdefg"[i]).join(", ")}]`
  ),
).map((l) => `z${l}`).join("\n") + "\n";

/** A sparse file of `size` bytes (no disk used). */
async function _sparse(path: string, size: number): Promise<void> {
  const f = await Deno.open(path, { create: true, write: true });
  await f.truncate(size);
  f.close();
}

/** Every case. */
export const CASES: readonly FaultCase[] = [
  {
    name: "stages count .inf",
    item: 1,
    setup: _yaml(_stages(".inf")),
    args: _plan,
    code: 2,
    message: /exp\.yaml:6:12: \.inf is infinity, which JSON cannot carry/,
  },
  {
    name: "stages count 10^8 (plan)",
    item: 1,
    setup: _yaml(_stages("100000000")),
    args: _plan,
    code: 2,
    message:
      /exp\.yaml:6:12: count: 100,000,000 stages; a stages node is limited to 10,000; raise it with --limit stages=N/,
  },
  {
    name: "stages count 10^8 (run)",
    item: 1,
    setup: _yaml(_stages("100000000")),
    args: _run,
    code: 2,
    message: /count: 100,000,000 stages/,
  },
  {
    name: "stages unroll past the node limit",
    item: 1,
    setup: _yaml(
      "nodes:\n  s:\n    kind: stages\n    count: 9000\n    each:\n" +
        Array.from(
          { length: 12 },
          (_, i) => `      a${i}: { kind: test.add, with: { a: 1 } }\n`,
        ).join(""),
    ),
    args: _plan,
    code: 2,
    message: /unroll into 108,000 nodes; an experiment is limited to 100,000/,
  },
  {
    name: "matrix of 10^6 variants (plan)",
    item: 1,
    setup: _yaml(_matrix(6, 10)),
    args: _plan,
    code: 2,
    message:
      /the matrix has 1,000,000 variants \(10 a0 x .* limited to 100,000/,
  },
  {
    name: "matrix of 10^6 variants (run)",
    item: 1,
    setup: _yaml(_matrix(6, 10)),
    args: _run,
    code: 2,
    message: /the matrix has 1,000,000 variants/,
  },
  {
    name: "YAML of 50 MB",
    item: 1,
    setup: (dir) => _bigYaml(dir, 50e6),
    args: _plan,
    code: 2,
    message:
      /exp\.yaml:1:1: the file is 4\d\.\d MB; experiment files are limited to 1\.0 MB/,
  },
  {
    name: "YAML alias bomb",
    item: 2,
    setup: _yaml(_BOMB),
    args: _plan,
    code: 2,
    message: /exp\.yaml:5:\d+: YAML aliases .* expanded more than 10000 times/,
  },
  {
    name: "YAML nested 20,000 deep",
    item: 8,
    setup: _yaml(
      "nodes:\n  x: { kind: test.add, with: { a: 1, note: " +
        "[".repeat(20000) + "]".repeat(20000) + " } }\n",
    ),
    args: _plan,
    code: 2,
    message: /exp\.yaml:4:104: nested deeper than 64 levels/,
  },
  {
    name: "a string of 200,000 characters",
    item: 1,
    setup: _yaml(`description: ${"x".repeat(200_000)}\nnodes: {}\n`),
    args: _plan,
    code: 2,
    message: /exp\.yaml:3:14: a string of 200000 characters/,
  },
  {
    name: "an unresolved YAML alias",
    item: 2,
    setup: _yaml("nodes: { a: *nowhere }\n"),
    args: _plan,
    code: 2,
    message: /exp\.yaml:3:\d+: .*nowhere/,
  },
  {
    name: "two YAML documents",
    item: 2,
    setup: _yaml("nodes: {}\n---\nmore: 1\n"),
    args: _plan,
    code: 2,
    message: /multiple documents/,
  },
  {
    name: "binary garbage as the experiment file",
    item: 2,
    setup: (dir) => {
      const bytes = new Uint8Array(4096);
      let x = 7;
      for (let i = 0; i < bytes.length; i++) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        bytes[i] = x >>> 24;
      }
      return Deno.writeFile(join(dir, "exp.yaml"), bytes);
    },
    args: _plan,
    code: 2,
    message: /exp\.yaml:\d+:\d+: /,
    maxLines: 30,
  },
  {
    name: "a directory as the experiment file",
    item: 2,
    setup: (dir) => Deno.mkdir(join(dir, "exp.yaml")),
    args: _plan,
    code: 2,
    message: /exp\.yaml is a directory/,
  },
  {
    name: "NaN, -Infinity, -0 and a 30-digit integer in exec input (plan)",
    item: 3,
    setup: _yaml(
      'nodes:\n  x:\n    kind: exec\n    with:\n      command: "true"\n      input: { a: .nan, b: -.inf, c: -0, d: 123456789012345678901234567890 }\n',
    ),
    args: _plan,
    code: 2,
    message:
      /8:19: \.nan is NaN.*\n.*8:28: -\.inf is minus infinity.*\n.*8:38: -0 is negative zero.*\n.*8:45: the integer 123456789012345678901234567890 is beyond 2\^53/,
    maxLines: 5,
  },
  {
    name: "NaN in exec input (run): refused before anything runs",
    item: 3,
    setup: _yaml(
      'nodes:\n  x:\n    kind: exec\n    with:\n      command: "true"\n      input: { a: .nan }\n',
    ),
    args: _run,
    code: 2,
    message: /8:19: \.nan is NaN, which JSON cannot carry/,
  },
  {
    name: "a seed of 2^70",
    item: 3,
    setup: (dir) =>
      Deno.writeTextFile(
        join(dir, "exp.yaml"),
        "experiment: bad\nseed: 1180591620717411303424\nnodes: {}\n",
      ),
    args: _plan,
    code: 2,
    message: /2:7: the integer 1180591620717411303424 is beyond 2\^53/,
  },
  {
    name: "count: .nan is reported once",
    item: 8,
    setup: _yaml(_stages(".nan")),
    args: _plan,
    code: 2,
    message: /^1 error in .*\n.*6:12: \.nan is NaN/,
    maxLines: 2,
  },
  {
    name: "an unknown key in an env config (plan)",
    item: 6,
    setup: _yaml(
      "nodes:\n  envs: { kind: generate, with: { config: { preset: easy, wdith: 8 }, count: 4 } }\n",
    ),
    args: _plan,
    code: 2,
    message:
      /4:59: config\.wdith: unknown config field "wdith"; did you mean "width"\?/,
  },
  {
    name: "an unknown key in a stages from: config (plan)",
    item: 6,
    setup: _yaml(
      "nodes:\n  s:\n    kind: stages\n    count: 2\n    from: { config: { preset: easy, bogus: 1 } }\n    each:\n      envs: { kind: generate, with: { config: $prev.config, count: 4 } }\n      config: { kind: redesign, with: { engineer: fixed, context: none, config: $prev.config, findings: null } }\n",
    ),
    args: _plan,
    code: 2,
    message: /config\.bogus: unknown config field "bogus"/,
  },
  {
    name: "__proto__ in an env config",
    item: 6,
    setup: _yaml(
      "nodes:\n  envs: { kind: generate, with: { config: { preset: easy, __proto__: { width: 3 } }, count: 4 } }\n",
    ),
    args: _plan,
    code: 2,
    message: /4:59: a key named "__proto__" cannot be used/,
  },
  {
    name: "exec files name with ../ (plan)",
    item: 6,
    setup: _yaml(
      'nodes:\n  b: { kind: test.blob, with: { size: 4 } }\n  x: { kind: exec, with: { command: "true", files: { ../../evil: $b.blob } } }\n',
    ),
    args: _plan,
    code: 2,
    message: /5:54: files\.\.\.\/\.\.\/evil: must be a relative path inside/,
  },
  {
    name:
      "exec input file that does not exist (run): refused before anything runs",
    item: 6,
    setup: _yaml(
      "nodes:\n  x: { kind: exec, with: { command: python3, args: [train.py], inputs: [train.py] } }\n",
    ),
    args: _run,
    code: 2,
    message: /x: input file train\.py does not exist/,
  },
  {
    name: "a 2 GB file as an ONNX policy (evaluate)",
    item: 8,
    setup: (dir) => _sparse(join(dir, "big.onnx"), 2 ** 31),
    args: (dir) => [
      "evaluate",
      "--policy",
      join(dir, "big.onnx"),
      "--suite",
      "base",
      "--count",
      "2",
    ],
    code: 2,
    message: /big\.onnx is 2048 MB; ONNX policy files are limited to 256 MB/,
  },
  {
    name: "a 2 GB file as an ONNX policy (run)",
    item: 8,
    setup: async (dir) => {
      await _sparse(join(dir, "big.onnx"), 2 ** 31);
      await _yaml(
        "nodes:\n  envs: { kind: generate, with: { suites: [base], split: test, per_suite: 2 } }\n  score: { kind: evaluate, with: { policy: { file: big.onnx }, envs: $envs } }\n",
      )(dir);
    },
    args: _run,
    code: 1,
    message: /policy file big\.onnx is 2048 MB; ONNX policy files are limited/,
    maxLines: 40,
  },
  {
    name: "run-node with a key that is not one",
    item: 2,
    setup: () => Promise.resolve(),
    args: (dir) => ["--cache", join(dir, "cache"), "run-node", "zz"],
    code: 2,
    message: /No experiment file zz/,
  },
  {
    name: "--limit with an unknown name",
    item: 1,
    setup: _yaml("nodes: {}\n"),
    args: (dir) => ["--limit", "stagez=5", ..._plan(dir)],
    code: 2,
    message: /--limit stagez=5: expected NAME=N with NAME one of file-bytes/,
  },
  {
    name: "a bundle that is not one",
    item: 4,
    setup: (dir) => Deno.writeTextFile(join(dir, "b.esb"), "hello\n"),
    args: (dir) => [
      "--cache",
      join(dir, "cache"),
      "cache",
      "import",
      join(dir, "b.esb"),
    ],
    code: 2,
    message: /b\.esb is not an envsmith bundle/,
  },
  {
    name: "a bundle with a malformed record header",
    item: 4,
    setup: (dir) =>
      Deno.writeTextFile(
        join(dir, "b.esb"),
        'envsmith-bundle 1\n{"size": 3}\nabc\n{"type":"end","count":1}\n',
      ),
    args: (dir) => [
      "--cache",
      join(dir, "cache"),
      "cache",
      "import",
      join(dir, "b.esb"),
    ],
    code: 2,
    message:
      /b\.esb: the record at byte 18 has no type \(expected entry, blob, aux or end\); .* nothing was imported/,
  },
  {
    name: "a gzip bundle cut short",
    item: 4,
    setup: (dir) =>
      Deno.writeFile(
        join(dir, "b.esb.gz"),
        new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2]),
      ),
    args: (dir) => [
      "--cache",
      join(dir, "cache"),
      "cache",
      "import",
      join(dir, "b.esb.gz"),
    ],
    code: 2,
    message: /not a readable gzip-compressed bundle/,
  },
];

/** The verdict on one case. */
export interface CaseResult {
  /** The case. */
  readonly case: FaultCase;
  /** What the probe saw. */
  readonly probe: ProbeResult;
  /** What was wrong (empty when refused cleanly). */
  readonly problems: readonly string[];
}

/** Bounds every case must keep. */
export const BOUNDS = { ms: 10_000, mb: 500 } as const;

/** Sets a case up in a fresh directory under `root`, runs it, and judges it. */
export async function checkCase(
  c: FaultCase,
  root: string,
): Promise<CaseResult> {
  const dir = await Deno.makeTempDir({ dir: root, prefix: "case-" });
  await c.setup(dir);
  const r = await probe(c.args(dir));
  const problems: string[] = [];
  const text = r.err + r.out;
  if (r.timedOut) problems.push(`no answer within ${BOUNDS.ms} ms`);
  if (r.code !== c.code) problems.push(`exit ${r.code}, expected ${c.code}`);
  if (!c.message.test(text)) {
    problems.push(`message does not match ${c.message}`);
  }
  if (hasStackTrace(text)) problems.push("printed a stack trace");
  const lines = r.err.trimEnd().split("\n").length;
  if (lines > (c.maxLines ?? 4)) {
    problems.push(`${lines} lines on stderr (at most ${c.maxLines ?? 4})`);
  }
  if (r.ms > BOUNDS.ms) problems.push(`took ${r.ms.toFixed(0)} ms`);
  if (r.peakMb > BOUNDS.mb) problems.push(`peak ${r.peakMb.toFixed(0)} MB`);
  if (problems.length) problems.push(`output:\n${text.slice(0, 3000)}`);
  return { case: c, probe: r, problems };
}

/** Runs every case, `parallel` at a time; results in catalogue order. */
export async function checkAll(
  root: string,
  parallel = 3,
  cases: readonly FaultCase[] = CASES,
): Promise<CaseResult[]> {
  const out: CaseResult[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < cases.length; i = next++) {
      out[i] = await checkCase(cases[i]!, root);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return out;
}

/** Shortcut for a result line: `ok  12 ms  83 MB  name`. */
export function formatResult(r: CaseResult): string {
  return `${r.problems.length ? "FAIL" : "ok  "} ${
    r.probe.ms.toFixed(0).padStart(5)
  } ms ${
    r.probe.peakMb.toFixed(0).padStart(4)
  } MB  [${r.case.item}] ${r.case.name}${
    r.problems.length ? "\n      " + r.problems.join("\n      ") : ""
  }`;
}
