/**
 * The built-in `exec` kind: runs an external command (no shell) in a fresh
 * work directory, with declared input files (hashed into the key and copied
 * in), declared output files (stored as blobs), an allow-list of environment
 * variables, and optional JSON `input` (which may hold references to other
 * nodes' values) written to `input.json`.
 *
 * @example
 * ```yaml
 * train:
 *   kind: exec
 *   with:
 *     command: python3
 *     args: [train.py, --steps, 1000]
 *     inputs: [train.py]
 *     input: { config: $config, seed: $seed }   # -> $ENVSMITH_INPUT (input.json)
 *     outputs: [model.onnx, { name: metrics, path: out/metrics.json }]
 *     json: out/metrics.json                   # parsed into value.json
 *     env: [CUDA_VISIBLE_DEVICES]
 * ```
 *
 * @module
 */
import * as v from "valibot";
import {
  dirname,
  isAbsolute,
  join,
  normalize,
  relative,
  resolve,
} from "node:path";
import { hashInputs } from "../input_files.ts";
import { DEFAULT_LIMITS } from "../limits.ts";
import { ChildSpawnError, describeExit, runChild } from "./child_process.ts";
import { UserError } from "../errors.ts";
import { NotRegularFileError, readRegularFile } from "../regular_file.ts";
import type { BlobRef, Json, NodeContext, NodeKind } from "../types.ts";

const _RelPathKey = v.pipe(
  v.string(),
  v.check(
    (p) => !isAbsolute(p) && !normalize(p).startsWith(".."),
    "must be a relative path inside the directory",
  ),
);
const _RelPath: v.GenericSchema<unknown, string> = _RelPathKey;

const _Params: v.GenericSchema<unknown, ExecParams> = v.strictObject({
  command: v.pipe(v.string(), v.minLength(1)),
  args: v.optional(v.array(v.union([v.string(), v.number(), v.boolean()])), []),
  inputs: v.optional(v.array(_RelPath), []),
  files: v.optional(
    v.record(
      _RelPathKey,
      v.looseObject({ $blob: v.string(), size: v.number(), media: v.string() }),
    ),
    {},
  ),
  input: v.optional(v.unknown()),
  outputs: v.optional(
    v.array(
      v.union([_RelPath, v.strictObject({ name: v.string(), path: _RelPath })]),
    ),
    [],
  ),
  json: v.optional(_RelPath),
  env: v.optional(
    v.array(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/))),
    [],
  ),
  timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

/** Parameters of the `exec` kind (see docs/experiments.md, The `exec` kind). */
export interface ExecParams {
  /** The program (no shell). */
  readonly command: string;
  /** Its arguments. */
  readonly args: readonly (string | number | boolean)[];
  /** Input files and directories, relative to the experiment file: hashed into the key, copied in. */
  readonly inputs: readonly string[];
  /** Blobs of other nodes written into the work directory, by file name. */
  readonly files: Readonly<Record<string, BlobRef>>;
  /** JSON written to `input.json` (its path in `$ENVSMITH_INPUT`). */
  readonly input?: unknown | undefined;
  /** Files stored as blobs: a path, or a name and a path. */
  readonly outputs:
    readonly (string | { readonly name: string; readonly path: string })[];
  /** A file parsed into `value.json`. */
  readonly json?: string | undefined;
  /** Environment variables passed through. */
  readonly env: readonly string[];
  /** Time limit (ms). */
  readonly timeout_ms?: number | undefined;
}

/** The name an output gets in `value.outputs` (`out/model.onnx` -> `out_model_onnx`). */
export function outputName(o: ExecParams["outputs"][number]): string {
  return typeof o === "string" ? o.replace(/[^A-Za-z0-9_-]/g, "_") : o.name;
}

/** Copies a declared input (a regular file or a folder of them) into the work directory. */
function _copy(src: string, dest: string): void {
  const st = Deno.statSync(src);
  if (!st.isFile && !st.isDirectory) {
    // (plan refuses it; this is a file replaced since)
    throw new UserError(
      `input ${src} is no longer a regular file or folder; plan again`,
    );
  }
  if (st.isDirectory) {
    Deno.mkdirSync(dest, { recursive: true });
    for (const e of Deno.readDirSync(src)) {
      _copy(join(src, e.name), join(dest, e.name));
    }
  } else {
    Deno.mkdirSync(dirname(dest), { recursive: true });
    Deno.copyFileSync(src, dest);
  }
}

/** One line per parameter, for editors (the JSON Schema's descriptions). */
export const EXEC_PARAM_DOCS: Readonly<Record<string, string>> = {
  command: "the program to run (no shell): a name on PATH or a path",
  args: "its arguments",
  inputs:
    "files (relative to the experiment file) whose contents are part of the key",
  files:
    "blobs of other nodes written into the work directory under these names",
  input:
    "JSON written to input.json in the work directory (references resolved)",
  outputs: "files the program writes that become blobs of the value",
  json: "a JSON file the program writes that becomes the value",
  env:
    "names of environment variables passed through (values never reach the key)",
  timeout_ms: "kill the program after this many milliseconds",
};

/** The `exec` kind. */
export const exec: NodeKind<ExecParams> = {
  name: "exec",
  description:
    "run an external command with declared input/output files (no shell)",
  params: _Params,
  paramDocs: EXEC_PARAM_DOCS,
  module: import.meta.url,
  fingerprint(params, info): Json {
    const p = params as { inputs?: unknown };
    const inputs = Array.isArray(p.inputs) ? p.inputs : [];
    for (const f of inputs) {
      if (typeof f !== "string" || f.startsWith("$")) {
        throw new UserError(
          `exec inputs must be literal paths, got ${JSON.stringify(f)}`,
        );
      }
    }
    // regular files and folders of them, streamed, within input-bytes
    const files = hashInputs(
      info.baseDir,
      inputs as string[],
      info.inputBytes ?? DEFAULT_LIMITS.inputBytes,
    );
    return { files };
  },
  async run(p, ctx) {
    const env = await _prepare(p, ctx);
    ctx.log(`exec ${p.command} ${p.args.map(String).join(" ")}`);
    await _spawn(p, ctx, env);
    const value: Record<string, Json> = { outputs: await _outputs(p, ctx) };
    if (p.json) {
      const bytes = _readOutput(ctx.workDir, p.json, p.command, "json");
      try {
        value.json = JSON.parse(new TextDecoder().decode(bytes)) as Json;
      } catch (e) {
        throw new Error(
          `json: cannot read ${p.json} as JSON: ${(e as Error).message}`,
        );
      }
    }
    return { value };
  },
};

/** Copies the inputs and blobs into the work directory; returns the command's environment. */
async function _prepare(
  p: ExecParams,
  ctx: NodeContext,
): Promise<Record<string, string>> {
  for (const f of p.inputs) {
    _copy(resolve(ctx.baseDir, f), join(ctx.workDir, f));
  }
  for (const [name, ref] of Object.entries(p.files)) {
    const dest = join(ctx.workDir, name);
    if (relative(ctx.workDir, dest).startsWith("..")) {
      throw new Error(`files.${name} escapes the work directory`);
    }
    Deno.mkdirSync(dirname(dest), { recursive: true });
    Deno.writeFileSync(dest, await ctx.readBlob(ref));
  }
  const env: Record<string, string> = {
    ENVSMITH_SEED: String(ctx.seed),
    ENVSMITH_KEY: ctx.key,
    ENVSMITH_WORK: ctx.workDir,
  };
  for (const name of ["PATH", "HOME", "LANG", "TMPDIR", ...p.env]) {
    const val = Deno.env.get(name);
    if (val !== undefined) env[name] = val;
  }
  if (p.input !== undefined) {
    Deno.writeTextFileSync(
      join(ctx.workDir, "input.json"),
      JSON.stringify(p.input),
    );
    env.ENVSMITH_INPUT = join(ctx.workDir, "input.json");
  }
  return env;
}

/**
 * Runs the command in its own process group (the timeout, an abort and its
 * own exit kill the whole group), its output lines to the log (bounded);
 * throws with the end of stderr when it fails.
 */
async function _spawn(
  p: ExecParams,
  ctx: NodeContext,
  env: Record<string, string>,
): Promise<void> {
  const r = await runChild(p.command, {
    args: p.args.map(String),
    cwd: ctx.workDir,
    env,
    signal: ctx.signal,
    ...(p.timeout_ms !== undefined ? { timeoutMs: p.timeout_ms } : {}),
    stdoutCapBytes: 0,
    stderrCapBytes: 4000,
    onLine: (tag, line) => ctx.log(`${tag} ${line}`),
  }).catch((e) => {
    throw e instanceof ChildSpawnError ? new UserError(e.message) : e;
  });
  if (r.logDropped > 0) {
    ctx.log(`(${r.logDropped} bytes of output not logged: log cap reached)`);
  }
  if (!r.success) {
    throw new Error(
      describeExit(p.command, r, {
        ...(p.timeout_ms !== undefined ? { timeoutMs: p.timeout_ms } : {}),
      }),
    );
  }
}

/** Largest declared output read (4 GiB, the store's largest blob). */
export const MAX_OUTPUT_BYTES = 4 * 1024 * 1024 * 1024;

/**
 * Reads a declared output: it must be a regular file inside the work
 * directory (no symlink on the way, no FIFO, no device), of bounded size,
 * checked before it is opened.
 */
function _readOutput(
  workDir: string,
  path: string,
  command: string,
  what: "output" | "json",
): Uint8Array {
  const full = join(workDir, path);
  const name = what === "json"
    ? `json file ${path}`
    : `declared output ${path}`;
  let inside: boolean;
  try {
    const real = Deno.realPathSync(dirname(full));
    const root = Deno.realPathSync(workDir);
    inside = real === root || real.startsWith(root + "/");
  } catch {
    throw new Error(`${name} was not written by ${command}`);
  }
  if (!inside) {
    throw new Error(
      `${name} is not inside the work directory (a directory on its path is a symlink out of it); write the file itself there`,
    );
  }
  try {
    return readRegularFile(full, MAX_OUTPUT_BYTES);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error(`${name} was not written by ${command}`);
    }
    if (e instanceof NotRegularFileError) {
      throw new Error(
        `${name} is ${e.what}${
          e.what.startsWith("larger") ? "" : ", not a regular file"
        }: write the file itself into the work directory`,
      );
    }
    throw e;
  }
}

/** Stores the declared outputs as blobs, by output name. */
async function _outputs(
  p: ExecParams,
  ctx: NodeContext,
): Promise<Record<string, Json>> {
  const outputs: Record<string, Json> = {};
  for (const o of p.outputs) {
    const path = typeof o === "string" ? o : o.path;
    const bytes = _readOutput(ctx.workDir, path, p.command, "output");
    outputs[outputName(o)] = (await ctx.writeBlob(
      bytes,
      path.endsWith(".json")
        ? "application/json"
        : path.endsWith(".onnx")
        ? "application/onnx"
        : "application/octet-stream",
    )) as unknown as Json;
  }
  return outputs;
}

/** @see exec */
export const kind = exec;

/**
 * The kinds built into the engine (`exec`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { builtinKinds } from "./exec_kind.ts";
 * assert.deepEqual(builtinKinds.map((k) => k.name), ["exec"]);
 * ```
 */
// deno-lint-ignore no-explicit-any
export const builtinKinds: readonly NodeKind<any>[] = [exec];
