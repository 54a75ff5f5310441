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
import { Store } from "@envsmith/engine/cache";
import { hasStackTrace, probe, type ProbeResult } from "./probe.ts";

/** One bad input. */
export interface FaultCase {
  /** Short name. */
  readonly name: string;
  /**
   * The class of fault (1-8: unbounded input, stack trace, values JSON
   * cannot carry, bundles, ...; 11-18: process trees, files in the cache
   * that are not files, manifests, bundles, cache locations, model files,
   * planning cost, and smaller ones; docs/faults.md).
   */
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
  /** Extra environment variables of the CLI. */
  readonly env?: Readonly<Record<string, string>>;
}

const HEAD = "experiment: bad\nseed: 1\n";

function _yaml(body: string): (dir: string) => Promise<void> {
  return (dir) => Deno.writeTextFile(join(dir, "exp.yaml"), HEAD + body);
}

/** The CLI's arguments `args` with the case directory's cache as `--cache`. */
function _inCache(dir: string, ...args: string[]): string[] {
  return ["--cache", join(dir, "cache"), ...args];
}

/**
 * A setup that writes the experiment `body` and runs it into the case
 * directory's cache, or into its folder `cache` when that is given.
 */
function _ran(body: string, cache = "cache"): (dir: string) => Promise<void> {
  return async (dir) => {
    await _yaml(body)(dir);
    await probe(["--cache", join(dir, cache), "run", join(dir, "exp.yaml")]);
  };
}

/** The case directory's cache. */
function _cacheStore(dir: string): Store {
  return new Store(join(dir, "cache"));
}

const _plan = (dir: string) => _inCache(dir, "plan", join(dir, "exp.yaml"));
const _run = (dir: string) => _inCache(dir, "run", join(dir, "exp.yaml"));

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

const _PLANTED = {
  dir: "a directory",
  zero: "a symlink to /dev/zero",
  etc: "a symlink to /etc",
  dangling: "a dangling symlink to .*nowhere",
  fifo: "a FIFO",
} as const;

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
    // Each value expands to 900,000 values, under the limit of 2,000,000
    // alone; three together are over it (checked together, at once).
    name: "three --set values of 900,000 expanded values each",
    item: 2,
    setup: _yaml(
      "nodes:\n  x: { kind: test.add, with: { a: 1 } }\n  y: { kind: test.add, with: { a: 2 } }\n",
    ),
    args: (dir) => {
      const v = `[&a [${Array(1000).fill("x").join(",")}], ${
        Array(899).fill("*a").join(",")
      }]`;
      return [
        ..._plan(dir),
        ...["x.with.note", "y.with.note", "x.with.b"].flatMap((p) => [
          "--set",
          `${p}=${v}`,
        ]),
      ];
    },
    code: 2,
    message:
      /^1 error in --set x\.with\.b=\[&a \[x,x,.*… \(\d,\d{3} characters\):\n.*:1:1: the file with its 3 --set value\(s\) holds more than 2000000 values once YAML aliases are expanded/,
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
    args: (dir) => _inCache(dir, "run-node", "zz"),
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
    args: (dir) => _inCache(dir, "cache", "import", join(dir, "b.esb")),
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
    args: (dir) => _inCache(dir, "cache", "import", join(dir, "b.esb")),
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
    args: (dir) => _inCache(dir, "cache", "import", join(dir, "b.esb.gz")),
    code: 2,
    message: /not a readable gzip-compressed bundle/,
  },
  // Process trees: a command that forks is stopped with all it forked.
  {
    name: 'exec sh -c "sleep 60 & sleep 60" with timeout_ms 2000',
    item: 11,
    setup: _yaml(
      'nodes:\n  x: { kind: exec, with: { command: sh, args: [-c, "sleep 60 & sleep 60"], timeout_ms: 2000 } }\n',
    ),
    args: _run,
    code: 1,
    message: /sh timed out after 2000 ms \(its process group was killed\)/,
    maxLines: 12,
  },
  {
    name: "exec writing 40 MB without a newline (bounded time, memory, log)",
    item: 11,
    setup: _yaml(
      'nodes:\n  x: { kind: exec, with: { command: sh, args: [-c, "head -c 40000000 /dev/zero | tr \\"\\\\\\\\0\\" a"] } }\n',
    ),
    args: _run,
    code: 0,
    message: /bad: 1 computed, 0 cached, 0 failed/,
    maxLines: 8,
  },
  {
    name: "exec output that is a symlink to /dev/zero",
    item: 11,
    setup: _yaml(
      'nodes:\n  x: { kind: exec, with: { command: sh, args: [-c, "ln -s /dev/zero out.bin"], outputs: [out.bin] } }\n',
    ),
    args: _run,
    code: 1,
    message:
      /declared output out\.bin is a symlink to \/dev\/zero, not a regular file/,
    maxLines: 12,
  },
  {
    name: "exec output that is a FIFO",
    item: 11,
    setup: _yaml(
      'nodes:\n  x: { kind: exec, with: { command: sh, args: [-c, "mkfifo out.bin"], outputs: [out.bin], timeout_ms: 5000 } }\n',
    ),
    args: _run,
    code: 1,
    message: /declared output out\.bin is a FIFO, not a regular file/,
    maxLines: 12,
  },
  // Only regular files in the cache.
  ...(["dir", "zero", "etc", "dangling", "fifo"] as const).map((what) => ({
    name: `cache verify: an entry that is ${_PLANTED[what]}`,
    item: 12,
    setup: async (dir: string) => {
      const store = _cacheStore(dir);
      store.ensureWritable();
      await _plant(store.entryPath("e".repeat(64)), what, dir);
    },
    args: (dir: string) => _inCache(dir, "cache", "verify"),
    code: 1,
    message: new RegExp(
      `entry e{64} .*: ${_PLANTED[what]}.*, not an entry file`,
    ),
  })),
  {
    name: "cache verify: a blob that is a symlink to /etc",
    item: 12,
    setup: async (dir) => {
      const store = _cacheStore(dir);
      store.ensureWritable();
      await _plant(store.blobPath("b".repeat(64)), "etc", dir);
    },
    args: (dir) => _inCache(dir, "cache", "verify"),
    code: 1,
    message: /blob b{64} .*: a symlink to \/etc, not a blob file/,
  },
  {
    name:
      "run: a cached entry replaced by a FIFO is moved aside and recomputed",
    item: 12,
    setup: async (dir) => {
      await _ran("nodes:\n  a: { kind: test.add, with: { a: 1 } }\n")(dir);
      const store = _cacheStore(dir);
      const [key] = [...store.keys()];
      await Deno.remove(store.entryPath(key!));
      await _plant(store.entryPath(key!), "fifo", dir);
    },
    args: _run,
    code: 0,
    message: /a FIFO, not an entry file[^]*bad: 1 computed/,
    maxLines: 8,
  },
  // Manifests are data.
  ...(["status", "run", "gc"] as const).map((cmd) => ({
    name: `a manifest [1,2,3] (${cmd})`,
    item: 13,
    setup: async (dir: string) => {
      await _yaml("nodes:\n  a: { kind: test.add, with: { a: 1 } }\n")(dir);
      await Deno.mkdir(join(dir, "cache", "runs", "bad"), { recursive: true });
      await Deno.writeTextFile(
        join(dir, "cache", "runs", "bad", "2000-01-01.json"),
        "[1,2,3]",
      );
    },
    args: (dir: string) =>
      cmd === "gc"
        ? _inCache(dir, "cache", "gc")
        : _inCache(dir, cmd, join(dir, "exp.yaml")),
    // gc cannot tell which entries that run needs: it removes nothing.
    code: cmd === "gc" ? 2 : 0,
    message: cmd === "gc"
      ? /^cache gc removed nothing: run manifest .*2000-01-01\.json is not a run manifest: a JSON array, expected an object, so gc cannot tell which entries that run needs\. Repair it, or delete it/
      : /skipped run manifest .*2000-01-01\.json: not a run manifest: a JSON array, expected an object/,
    maxLines: 6,
  })),
  // Bundles.
  {
    name: "cache export after a results-only import",
    item: 14,
    setup: async (dir) => {
      await _ran(
        "nodes:\n  w: { kind: test.blob, with: { size: 2048 } }\n  a: { kind: test.add, with: { a: 1 } }\n",
        "src",
      )(dir);
      const src = join(dir, "src");
      await probe([
        "--cache",
        src,
        "cache",
        "export",
        join(dir, "json.esb"),
        "--only",
        "json",
      ]);
      await probe(_inCache(dir, "cache", "import", join(dir, "json.esb")));
    },
    args: (dir) => _inCache(dir, "cache", "export", join(dir, "again.esb.gz")),
    code: 0,
    message:
      /wrote .*again\.esb\.gz: 2 entries, 0 blobs, 0 aux files .*1 entries without their blobs \(imported results only\)/,
  },
  ...([
    [
      "a bundle with the same key twice (--trust)",
      "twice.esb",
      false,
      /twice\.esb: entry [0-9a-f]{64} appears twice; .*nothing was imported/,
    ],
    [
      "a --trust bundle whose aux name holds a NUL byte",
      "nul.esb",
      true,
      /nul\.esb: aux path .* holds a control character; .*nothing was imported/,
    ],
  ] as const).map(([name, file, nulAux, message]) => ({
    name,
    item: 14,
    setup: (dir: string) => _twiceBundle(dir, file, nulAux),
    args: (dir: string) =>
      _inCache(dir, "cache", "import", "--trust", join(dir, file)),
    code: 2,
    message,
  })),
  // Cache locations.
  ...([
    [
      "/dev/null",
      /"\/dev\/null" as the cache: it is a device, not a directory/,
    ],
    ["", /--cache "" as the cache: it is empty/],
    ["FILE", /exp\.yaml" as the cache: it is a file, not a directory/],
    ["FILE/sub", /exp\.yaml is a file, so nothing can be made inside it/],
  ] as const).map(([where, message]) => ({
    name: `--cache ${where === "" ? '""' : where}`,
    item: 15,
    setup: _yaml("nodes:\n  a: { kind: test.add, with: { a: 1 } }\n"),
    args: (dir: string) => [
      "--cache",
      where.replace("FILE", join(dir, "exp.yaml")),
      "run",
      join(dir, "exp.yaml"),
    ],
    code: 2,
    message,
  })),
  {
    name: 'ENVSMITH_CACHE=""',
    item: 15,
    setup: _yaml("nodes:\n  a: { kind: test.add, with: { a: 1 } }\n"),
    args: (dir) => ["status", join(dir, "exp.yaml")],
    env: { ENVSMITH_CACHE: "" },
    code: 2,
    message: /ENVSMITH_CACHE "" as the cache: it is empty/,
  },
  // Model files.
  ...([
    [
      "a tensor count of 2^63-1 in 88 bytes",
      2n ** 63n - 1n,
      0n,
      /the tensor count at byte 8 is 9223372036854775807/,
    ],
    [
      "a kv count of 2^62",
      0n,
      2n ** 62n,
      /the metadata count at byte 16 is 4611686018427387904/,
    ],
  ] as const).map(([what, tensors, kvs, message]) => ({
    name: `redesign --gguf: ${what}`,
    item: 16,
    setup: (dir: string) =>
      Deno.writeFile(join(dir, "m.gguf"), _gguf(tensors, kvs)),
    args: (dir: string) => [
      "redesign",
      "--engineer",
      "llm",
      "--context",
      "none",
      "--preset",
      "easy",
      "--gguf",
      join(dir, "m.gguf"),
    ],
    code: 2,
    message,
  })),
  {
    name: "a redesign node whose GGUF model has a tensor count of 2^63-1 (run)",
    item: 16,
    setup: async (dir) => {
      await Deno.writeFile(join(dir, "m.gguf"), _gguf(2n ** 63n - 1n, 0n));
      await _yaml(
        `nodes:\n  c: { kind: redesign, with: { engineer: { name: llm, llm: { gguf: ${
          join(dir, "m.gguf")
        } } }, context: none, config: { preset: easy }, findings: null } }\n`,
      )(dir);
    },
    args: _run,
    code: 1,
    message: /m\.gguf is not a loadable GGUF model: the tensor count at byte 8/,
    maxLines: 12,
  },
  {
    name:
      "an ONNX policy with hidden size 1e5 in its metadata (train --policy)",
    item: 16,
    setup: (dir) => _tamperedPolicy(dir, { hidden: [100000] }, false),
    args: (dir) => [
      "train",
      "--policy",
      join(dir, "p.onnx"),
      "--preset",
      "easy",
      "--minutes",
      "0.01",
      "--out",
      join(dir, "out.onnx"),
    ],
    code: 2,
    message: /p\.onnx: its envsmith\.spec metadata has hidden sizes \[100000\]/,
  },
  {
    name: "an ONNX policy with NaN weights (evaluate)",
    item: 16,
    setup: (dir) => _tamperedPolicy(dir, {}, true),
    args: (dir) => [
      "evaluate",
      "--policy",
      join(dir, "p.onnx"),
      "--suite",
      "base",
      "--count",
      "2",
    ],
    code: 2,
    message: /p\.onnx: initializer trunk\.0\.weight holds NaN at index 0/,
  },
  // Planning cost.
  {
    name: "1,000 stages whose exec input lists $earlier.config (plan)",
    item: 17,
    setup: _yaml(
      'nodes:\n  s:\n    kind: stages\n    count: 1000\n    from: { config: 1 }\n    each:\n      config: { kind: exec, with: { command: "true", input: { all: $earlier.config } } }\n',
    ),
    args: _plan,
    code: 2,
    message:
      /"\$earlier\.config" at stage 632 brings the references between nodes past 200,000/,
  },
  // The smaller ones.
  {
    name: "run-node KEY with the job spec of another key",
    item: 18,
    setup: async (dir) => {
      await _ran(
        "nodes:\n  a: { kind: test.add, with: { a: 1 } }\n  b: { kind: test.add, with: { a: 2 } }\n",
      )(dir);
      const store = _cacheStore(dir);
      const [k1, k2] = [...store.keys()];
      await Deno.copyFile(store.jobPath(k1!), store.jobPath(k2!));
      await Deno.writeTextFile(join(dir, "key"), k2!);
    },
    args: (dir) =>
      _inCache(dir, "run-node", Deno.readTextFileSync(join(dir, "key"))),
    code: 2,
    message:
      /is not the spec of key [0-9a-f]{64} \(it holds key [0-9a-f]{64}\)/,
  },
  {
    name: "a wildcard column path with a typo",
    item: 18,
    setup: _ran(
      "matrix: { m: [x, y] }\nnodes:\n  a: { kind: test.add, with: { a: 1, note: $matrix.m } }\ntables:\n  - { name: t, node: a, rows: m, columns: value.pats.* }\n",
    ),
    args: (dir) =>
      _inCache(
        dir,
        "tables",
        join(dir, "exp.yaml"),
        "--out",
        join(dir, "tables"),
      ),
    code: 0,
    message:
      /table t: column path value\.pats\.\* matched nothing: value has no object "pats"; did you mean "parts"\?/,
  },
];

/** Puts something that is not a regular file at `path`. */
async function _plant(
  path: string,
  what: keyof typeof _PLANTED,
  dir: string,
): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  if (what === "dir") await Deno.mkdir(path);
  else if (what === "zero") await Deno.symlink("/dev/zero", path);
  else if (what === "etc") await Deno.symlink("/etc", path);
  else if (what === "dangling") {
    await Deno.symlink(join(dir, "nowhere"), path);
  } else {
    await new Deno.Command("mkfifo", { args: [path] }).output();
  }
}

/** An 88-byte GGUF header with the given counts. */
function _gguf(tensors: bigint, kvs: bigint): Uint8Array {
  const b = new Uint8Array(88);
  const v = new DataView(b.buffer);
  b.set(new TextEncoder().encode("GGUF"));
  v.setUint32(4, 3, true);
  v.setBigUint64(8, tensors, true);
  v.setBigUint64(16, kvs, true);
  return b;
}

/** A bundle of one real entry written twice (the second with another value), or with a NUL in an aux name. */
async function _twiceBundle(
  dir: string,
  name: string,
  nulAux: boolean,
): Promise<void> {
  await _ran("nodes:\n  a: { kind: test.add, with: { a: 1 } }\n", "src")(dir);
  const src = join(dir, "src");
  const store = new Store(src);
  const [key] = [...store.keys()];
  const entry = store.entryBytes(key!);
  const enc = new TextEncoder();
  const { sha256Hex } = await import("@envsmith/engine");
  const parts: Uint8Array[] = [enc.encode("envsmith-bundle 1\n")];
  const rec = (type: string, recName: string, body: Uint8Array) => {
    parts.push(
      enc.encode(
        JSON.stringify({
          type,
          name: recName,
          size: body.length,
          sha256: sha256Hex(body),
        }) + "\n",
      ),
      body,
      enc.encode("\n"),
    );
  };
  rec("entry", key!, entry);
  if (nulAux) rec("aux", "llm/a\u0000b.json", enc.encode("{}"));
  else {
    const text = new TextDecoder().decode(entry);
    const json = JSON.parse(text.slice(text.indexOf("\n") + 1));
    json.value = { sum: 999 };
    const body = JSON.stringify(json);
    rec(
      "entry",
      key!,
      enc.encode(`envsmith-entry 1 ${sha256Hex(body)}\n${body}`),
    );
  }
  parts.push(enc.encode(JSON.stringify({ type: "end", count: 2 }) + "\n"));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  await Deno.writeFile(join(dir, name), out);
}

/** A checkpoint with its spec metadata changed, or with a NaN weight. */
async function _tamperedPolicy(
  dir: string,
  spec: Record<string, unknown>,
  nan: boolean,
): Promise<void> {
  const { initCheckpoint, saveCheckpoint } = await import(
    "../policy/checkpoint.ts"
  );
  const onnx = (await import("onnx-proto")).default.onnx;
  const m = onnx.ModelProto.decode(
    saveCheckpoint(initCheckpoint({ hidden: [8], seed: 1 })),
  );
  const p = m.metadataProps.find((p) => p.key === "envsmith.spec")!;
  p.value = JSON.stringify({ ...JSON.parse(p.value!), ...spec });
  if (nan) {
    const t = m.graph!.initializer!.find((t) => t.name === "trunk.0.weight")!;
    const f = new Float32Array(
      t.rawData!.slice().buffer,
      0,
      t.rawData!.length >> 2,
    );
    f[0] = NaN;
    t.rawData = new Uint8Array(f.buffer);
  }
  await Deno.writeFile(join(dir, "p.onnx"), onnx.ModelProto.encode(m).finish());
}

/** The verdict on one case. */
export interface CaseResult {
  /** The case. */
  readonly case: FaultCase;
  /** What the probe saw. */
  readonly probe: ProbeResult;
  /** What was wrong (empty when refused cleanly). */
  readonly problems: readonly string[];
}

/**
 * How much slower than on an idle machine a case may be: the load average
 * over the cores, at least 1 (a 2-core machine at load 24 runs a fresh
 * process 12 times slower; the bound is for seconds, not minutes).
 */
function _loadFactor(): number {
  try {
    return Math.max(
      1,
      (Deno.loadavg()[0] ?? 0) / (navigator.hardwareConcurrency || 1),
    );
  } catch {
    return 1;
  }
}

/** The load factor when the catalogue was loaded: time bounds are multiplied by it. */
export const LOAD_FACTOR: number = _loadFactor();

/** Bounds every case must keep: 10 s on an idle machine (scaled to its load when the catalogue starts) and 500 MB. */
export const BOUNDS = {
  ms: Math.round(10_000 * LOAD_FACTOR),
  mb: 500,
} as const;

/** Sets a case up in a fresh directory under `root`, runs it, and judges it. */
export async function checkCase(
  c: FaultCase,
  root: string,
): Promise<CaseResult> {
  const dir = await Deno.makeTempDir({ dir: root, prefix: "case-" });
  await c.setup(dir);
  const r = await probe(c.args(dir), {
    timeoutMs: BOUNDS.ms,
    ...(c.env ? { env: c.env } : {}),
  });
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
