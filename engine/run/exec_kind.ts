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
import { sha256Hex } from "../canonical.ts";
import { ChildSpawnError, describeExit, runChild } from "./child_process.ts";
import { UserError } from "../errors.ts";
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

function _hashPath(
  path: string,
  rel: string,
  out: Record<string, string>,
): void {
  const st = Deno.statSync(path);
  if (st.isDirectory) {
    for (const e of [...Deno.readDirSync(path)].map((e) => e.name).sort()) {
      _hashPath(join(path, e), join(rel, e), out);
    }
  } else out[rel] = sha256Hex(Deno.readFileSync(path));
}

function _copy(src: string, dest: string): void {
  const st = Deno.statSync(src);
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

/** The `exec` kind. */
export const exec: NodeKind<ExecParams> = {
  name: "exec",
  description:
    "run an external command with declared input/output files (no shell)",
  params: _Params,
  module: import.meta.url,
  fingerprint(params, info): Json {
    const p = params as { inputs?: unknown };
    const files: Record<string, string> = {};
    for (const f of Array.isArray(p.inputs) ? p.inputs : []) {
      if (typeof f !== "string" || f.startsWith("$")) {
        throw new UserError(
          `exec inputs must be literal paths, got ${JSON.stringify(f)}`,
        );
      }
      try {
        _hashPath(resolve(info.baseDir, f), f, files);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) {
          throw new UserError(
            `input file ${f} does not exist (inputs are relative to ${info.baseDir}, the experiment file's directory); create it, or correct the path in inputs:`,
          );
        }
        throw new Error(
          `input file ${f} (relative to ${info.baseDir}): ${
            (e as Error).message
          }`,
        );
      }
    }
    return { files };
  },
  async run(p, ctx) {
    const env = await _prepare(p, ctx);
    ctx.log(`exec ${p.command} ${p.args.map(String).join(" ")}`);
    await _spawn(p, ctx, env);
    const value: Record<string, Json> = { outputs: await _outputs(p, ctx) };
    if (p.json) {
      try {
        value.json = JSON.parse(
          Deno.readTextFileSync(join(ctx.workDir, p.json)),
        ) as Json;
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

/** Stores the declared outputs as blobs, by output name. */
async function _outputs(
  p: ExecParams,
  ctx: NodeContext,
): Promise<Record<string, Json>> {
  const outputs: Record<string, Json> = {};
  for (const o of p.outputs) {
    const path = typeof o === "string" ? o : o.path;
    let bytes: Uint8Array;
    try {
      bytes = Deno.readFileSync(join(ctx.workDir, path));
    } catch {
      throw new Error(
        `declared output ${path} was not written by ${p.command}`,
      );
    }
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

/** The kinds built into the engine (`exec`). */
// deno-lint-ignore no-explicit-any
export const builtinKinds: readonly NodeKind<any>[] = [exec];
