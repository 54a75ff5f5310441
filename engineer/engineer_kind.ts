/**
 * The contract of an engineer kind: what `engineer:` in a `redesign` node
 * names. Built-in engineers and a user's own (a plugin module exporting
 * `engineers`) are registered the same way, in an
 * {@linkcode EngineerRegistry} (`registry.ts`).
 *
 * An engineer kind is a plain object:
 * - `name`: what `engineer: NAME` or `engineer: { name: NAME, ... }` says;
 * - `description`: one line for `--help`, `plan` and the JSON Schema;
 * - `params`: a valibot object schema of its parameters (the keys of the
 *   `engineer: { name, ... }` block besides `name` and `context`); its
 *   descriptions (`v.description`) flow into the JSON Schema. An engineer
 *   without parameters declares `v.strictObject({})`;
 * - `module`: `import.meta.url` of the file that defines it. The redesign
 *   node's key covers this file's import graph and the redesign node's own
 *   shared code, not the other engineers: editing one engineer recomputes
 *   only the redesigns that use it (and what follows them);
 * - `create(params, env)`: builds the {@linkcode Engineer} for one redesign.
 * - `families` (optional): the environment families it supports, by name,
 *   or `"any"` for an engineer that works through a family's declared
 *   space only; absent: `mapf-frozenlake` only. A redesign on another
 *   family is refused at `plan` in one line;
 * - `checkFamily(params, family)` (optional): what is wrong with the
 *   parameters on that family (a dimension it does not have), checked at
 *   `plan`;
 * - `fingerprint(params, info)` (optional): content that enters the key
 *   besides the code, computed before anything runs (the `llm` engineer's
 *   prompt files and model file digest, the `exec` engineer's program
 *   files). Throwing {@linkcode EngineerConfigError} refuses the
 *   experiment at `plan` with that message.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import assert from "node:assert/strict";
 * import type { EngineerKind } from "./engineer_kind.ts";
 *
 * const keep: EngineerKind<{ note: string }> = {
 *   name: "keep",
 *   description: "keeps the configuration and says so",
 *   params: v.strictObject({
 *     note: v.pipe(v.optional(v.string(), "kept"), v.description("what the rationale says")),
 *   }),
 *   module: import.meta.url,
 *   create: (params) => ({
 *     name: "keep",
 *     propose: (input) =>
 *       Promise.resolve({ config: input.config, rationale: params.note, events: [], reads: [] }),
 *   }),
 * };
 * assert.equal(keep.name, "keep");
 * ```
 *
 * @module
 */
import type * as v from "valibot";
import type { EnvironmentFamily } from "../families/family.ts";
import type { Engineer } from "./engineer.ts";

/** What an engineer is created with besides its parameters. */
export interface EngineerEnv {
  /** Directory relative paths in parameters resolve against (the experiment file's). */
  readonly baseDir: string;
  /**
   * A directory shared by every redesign across runs, inside the cache (the
   * `llm` engineer keeps its reply cache in `llm/` below it); absent outside
   * a run.
   */
  readonly auxDir?: string;
  /** Reads environment variables. @default Deno.env.get */
  readonly env?: (name: string) => string | undefined;
  /**
   * What an endpoint failure does (`llm`): `throw` fails the node (nothing
   * is cached), `fallback` keeps the current config (the CLI).
   * @default {"throw"}
   */
  readonly onEndpointError?: "throw" | "fallback";
  /** Appends a line to the node's log (an `exec` engineer's stderr goes here). */
  readonly log: (line: string) => void;
  /** Aborted when the run is cancelled. */
  readonly signal?: AbortSignal;
  /**
   * Starts programs (the `exec` engineer): argv only, its own process
   * group, killed whole on timeout or abort, output bounded. The redesign
   * node passes the engine's child-process runner; engineers never start
   * processes another way.
   */
  readonly runProgram?: ProgramRunner;
  /**
   * Reads a blob of the cache (a policy's ONNX checkpoint, a generate
   * node's instances): given inside a run, for engineers that consult a
   * policy (`probe`, `plr`, `accel`).
   */
  readonly readBlob?: (ref: { readonly $blob: string }) => Promise<Uint8Array>;
  /** Writes a blob into the cache (the level set of `plr` and `accel`); given inside a run. */
  readonly writeBlob?: (
    bytes: Uint8Array,
    media: string,
  ) => Promise<
    { readonly $blob: string; readonly size: number; readonly media: string }
  >;
  /**
   * The environment family the redesign works on (the redesign node's
   * `family`); engineers that support `"any"` family move through its
   * declared space. Absent: MAPF-FrozenLake.
   */
  readonly family?: EnvironmentFamily;
  /**
   * The `config` parameter as given when it is a level set (the buffer a
   * `plr` or `accel` redesign handed to this stage); absent otherwise.
   */
  readonly levelSet?: unknown;
}

/** How a program is run (a subset of the engine's child-process options). */
export interface ProgramRunOptions {
  /** Arguments (never interpreted by a shell). */
  readonly args?: readonly string[];
  /** Working directory. */
  readonly cwd?: string;
  /** The child's whole environment (with `clearEnv`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Start from an empty environment. */
  readonly clearEnv?: boolean;
  /** Written to stdin, which is then closed. */
  readonly stdin?: string;
  /** Time limit (ms): the whole process group is killed when reached. */
  readonly timeoutMs?: number;
  /** Aborting it kills the process group. */
  readonly signal?: AbortSignal;
  /** Captured stdout bytes; past it the tail is kept and the rest counted. */
  readonly stdoutCapBytes?: number;
  /** Captured stderr bytes. */
  readonly stderrCapBytes?: number;
  /** Receives every output line (for the node log). */
  readonly onLine?: (stream: "stdout" | "stderr", line: string) => void;
  /** Bytes of lines given to `onLine` in all. */
  readonly logCapBytes?: number;
}

/** How a program ended. */
export interface ProgramResult {
  /** Exit code 0 and not stopped. */
  readonly success: boolean;
  /** Exit code. */
  readonly code: number;
  /** The signal that ended it, if one did. */
  readonly signal: string | null;
  /** Stopped at the time limit. */
  readonly timedOut: boolean;
  /** Stopped because the signal aborted. */
  readonly aborted: boolean;
  /** Captured stdout. */
  readonly stdout: Uint8Array;
  /** stdout bytes over the cap, not kept. */
  readonly stdoutDropped: number;
  /** Captured stderr. */
  readonly stderr: Uint8Array;
  /** Wall time (ms). */
  readonly ms: number;
}

/**
 * Runs a program to its end (rejects only when it cannot be started); the
 * engine's `runChild` is one.
 */
export type ProgramRunner = (
  command: string,
  options: ProgramRunOptions,
) => Promise<ProgramResult>;

/** What `fingerprint` is given besides the parameters. */
export interface EngineerFingerprintInfo {
  /** Directory relative paths resolve against (the experiment file's). */
  readonly baseDir: string;
}

/** An object schema: what an engineer's parameters must be declared as. */
export type EngineerParamsSchema<P> = v.GenericSchema<unknown, P> & {
  /** The object schema's entries (its keys become the block's keys). */
  readonly entries: Readonly<Record<string, v.GenericSchema>>;
};

/** A kind of engineer: what `engineer:` names. */
// deno-lint-ignore no-explicit-any
export interface EngineerKind<P = any> {
  /** The name used in experiment files, e.g. `rules` (letters, digits, `_`, `-`, `.`). */
  readonly name: string;
  /** One line for `--help`, `plan` and the JSON Schema. */
  readonly description: string;
  /**
   * Schema of its parameters: a valibot object (`v.strictObject({...})`)
   * whose entries are the keys of `engineer: { name, ... }` besides `name`
   * and `context`. Descriptions (`v.description`) reach the JSON Schema.
   */
  readonly params: EngineerParamsSchema<P>;
  /** `import.meta.url` of the module that defines it: its import graph is its code. */
  readonly module: string;
  /**
   * The environment families it supports, by name, or `"any"` (it works
   * through the family's declared space only).
   * @default {["mapf-frozenlake"]}
   */
  readonly families?: "any" | readonly string[];
  /**
   * Optional: what is wrong with `params` on `family` (a dimension the
   * family does not have), in one line, or `null`; checked at `plan`.
   */
  checkFamily?(params: unknown, family: EnvironmentFamily): string | null;
  /**
   * Optional: extra content hashed into the redesign node's key, from the
   * literal parameters (node references still unresolved). Returning
   * `null` adds nothing.
   *
   * @throws {EngineerConfigError} for a mistake found before anything runs
   * (a program that does not exist): the experiment is refused at `plan`.
   */
  fingerprint?(params: unknown, info: EngineerFingerprintInfo): unknown;
  /**
   * Builds the engineer of one redesign from its validated parameters.
   *
   * @throws {EngineerConfigError} when the parameters cannot work together.
   */
  create(params: P, env: EngineerEnv): Engineer;
}

/**
 * The description of a parameter (`v.description(...)` in its schema's
 * pipe, also inside `v.optional`), or `undefined`.
 */
export function paramDescription(
  kind: Pick<EngineerKind, "params">,
  key: string,
): string | undefined {
  let s = kind.params.entries[key] as unknown as {
    pipe?: readonly { type?: string; description?: string }[];
    wrapped?: unknown;
  } | undefined;
  for (let depth = 0; s !== undefined && depth < 4; depth++) {
    const d = s.pipe?.find((a) => a.type === "description")?.description;
    if (d !== undefined) return d;
    s = (s.wrapped ?? s.pipe?.[0]) as typeof s;
    if (s === s?.pipe?.[0]) break;
  }
  return undefined;
}

/**
 * A mistake in how an engineer is configured (a missing endpoint, a
 * program that cannot run): a user error, reported in one line.
 */
export class EngineerConfigError extends TypeError {
  /** Build the error. */
  constructor(message: string) {
    super(message);
    this.name = "EngineerConfigError";
  }
}
