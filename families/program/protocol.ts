/**
 * The program protocol: an environment family, and its trainer and
 * evaluator, written in any language. envsmith starts the program once per
 * request (argv, no shell, in the experiment file's folder, an empty
 * environment but `PATH`, `HOME`, `LANG`, `TMPDIR` and the names in
 * `env`), writes one JSON object on its stdin and reads one JSON object
 * from its stdout. stderr goes to the node log. The exact format is in
 * docs/environments.md ("The program protocol"); every request carries
 * `"envsmith": 1` and `"request"`:
 *
 * | request    | fields sent                                               | reply                                                                  |
 * |------------|-----------------------------------------------------------|------------------------------------------------------------------------|
 * | `describe` | -                                                         | `{name, description, dimensions, presets, instance_schema?}`           |
 * | `generate` | `config`, `seed`, `count`                                 | `{instances: [{id, ...}]}` (exactly `count`, ids unique)               |
 * | `train`    | `instances`, `checkpoint` (path or null), `out_dir`, `seed`, `budget` | `{checkpoint: FILE in out_dir, metrics?: {name: number}}` |
 * | `evaluate` | `instances`, `checkpoint` (path or null), `seed`          | `{outcomes: [{id, success: 0/1, return, steps}]}` (one per instance)   |
 *
 * Every reply is checked here; a reply that breaks the format, and a
 * program that hangs, crashes, floods or writes garbage
 * ({@linkcode callProgram}), is a {@linkcode ProgramFamilyError}: one line
 * naming the family, the request and the fix.
 *
 * @module
 */
import * as v from "valibot";
import { Ajv } from "ajv";
import { UserError } from "@envsmith/engine/errors";
import {
  callProgram,
  callProgramSync,
  ProgramCallError,
  type ProgramCallOptions,
} from "@envsmith/engine/run";

/** The protocol version every request carries as `envsmith`. */
export const PROTOCOL_VERSION = 1;

/** One dimension of a family's configuration space. */
export interface Dimension {
  /** Dotted path into the configuration, e.g. `size` or `map.holes`. */
  path: string;
  /** One line for people and language models. */
  description: string;
  /** Least value. */
  min: number;
  /** Greatest value. */
  max: number;
  /** The step engineers move by. */
  step: number;
  /** Whole numbers only. */
  integer: boolean;
  /** Which way is harder. */
  harder: "up" | "down";
}

/** A configuration: a JSON object whose dimensions are numbers at their paths. */
export type ProgramConfig = { [key: string]: unknown };

/** An instance: a JSON object with a unique string `id`. */
export type ProgramInstance = { id: string; [key: string]: unknown };

/** One instance's outcome under `evaluate`. */
export interface Outcome {
  /** The instance's id. */
  id: string;
  /** 1 solved, 0 not. */
  success: 0 | 1;
  /** The episode's return. */
  return: number;
  /** Steps taken. */
  steps: number;
}

/** What `describe` returns. */
export interface FamilyDescription {
  /** The family's name. */
  name: string;
  /** One line on what it is. */
  description: string;
  /** Its configuration space. */
  dimensions: Dimension[];
  /** Named configurations (at least one). */
  presets: Record<string, ProgramConfig>;
  /** A JSON Schema every generated instance must match, if given. */
  instance_schema?: unknown;
  /** The optional requests the program answers (`check`, `render`, `mutate`). */
  requests: OptionalRequest[];
  /** Benchmark suites: a configuration (or `{preset}`), seed, count and split each. */
  suites: Record<string, ProgramSuite>;
}

/** The optional requests a program may answer (declared in `describe`). */
export const OPTIONAL_REQUESTS = ["check", "render", "mutate"] as const;

/** An optional request. */
export type OptionalRequest = typeof OPTIONAL_REQUESTS[number];

/** A suite as `describe` declares it. */
export interface ProgramSuite {
  /** What it tests. */
  description: string;
  /** Its split. */
  split: "train" | "validation" | "test";
  /** Its configuration, or a preset. */
  config: ProgramConfig | { preset: string };
  /** The generator seed (keep it apart from training seeds). */
  seed: number;
  /** How many instances. */
  count: number;
}

/** How to run the program (the `family:` block of a program node). */
export interface ProgramSpec {
  /** The program and its arguments (argv, no shell), e.g. `[python3, lake.py]`. */
  command: string[];
  /** Seconds per request; the whole process group is killed after it. */
  timeout: number;
  /** More files or folders the program reads; their content enters the key. */
  inputs: string[];
  /** Environment variables passed through. */
  env: string[];
}

/** The `family:` block: how to run the program. */
export const ProgramSpecSchema: v.GenericSchema<unknown, ProgramSpec> = v
  .strictObject({
    command: v.pipe(
      v.array(v.pipe(v.string(), v.minLength(1))),
      v.minLength(1, "command is [PROGRAM, ARGS...], e.g. [python3, lake.py]"),
      v.description(
        "the program and its arguments, no shell: [python3, lake.py] (paths relative to the experiment file)",
      ),
    ),
    timeout: v.optional(
      v.pipe(
        v.number(),
        v.minValue(0.1),
        v.maxValue(86_400),
        v.description(
          "seconds per request; the whole process group is killed after it; default 300",
        ),
      ),
      300,
    ),
    inputs: v.optional(
      v.pipe(
        v.array(v.pipe(v.string(), v.minLength(1))),
        v.description(
          "more files or folders the program reads (relative to the experiment file); their content enters the key",
        ),
      ),
      [],
    ),
    env: v.optional(
      v.pipe(
        v.array(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/))),
        v.description(
          "environment variables passed through (besides PATH, HOME, LANG, TMPDIR)",
        ),
      ),
      [],
    ),
  });

/** A family program that broke the protocol or could not answer: one line. */
export class ProgramFamilyError extends UserError {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "ProgramFamilyError";
  }
}

const _Dimension = v.strictObject({
  path: v.pipe(v.string(), v.regex(/^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$/)),
  description: v.string(),
  min: v.number(),
  max: v.number(),
  step: v.pipe(v.number(), v.gtValue(0)),
  integer: v.boolean(),
  harder: v.picklist(["up", "down"]),
});

const _Describe = v.object({
  name: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9._-]*$/)),
  description: v.string(),
  dimensions: v.pipe(v.array(_Dimension), v.minLength(1)),
  presets: v.record(v.string(), v.record(v.string(), v.unknown())),
  instance_schema: v.optional(v.unknown()),
  requests: v.optional(v.array(v.picklist(OPTIONAL_REQUESTS)), []),
  suites: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]+$/)),
      v.object({
        description: v.optional(v.string(), ""),
        split: v.picklist(["train", "validation", "test"]),
        config: v.union([
          v.strictObject({ preset: v.string() }),
          v.record(v.string(), v.unknown()),
        ]),
        seed: v.pipe(v.number(), v.integer(), v.minValue(0)),
        count: v.pipe(v.number(), v.integer(), v.minValue(1)),
      }),
    ),
    {},
  ),
});

const _Instance = v.looseObject({ id: v.pipe(v.string(), v.minLength(1)) });

const _Generate = v.object({ instances: v.array(_Instance) });

const _Train = v.object({
  checkpoint: v.pipe(
    v.string(),
    v.regex(/^[^/\\]+$/, "a file name inside out_dir, without a folder"),
    v.check((s) => s !== "." && s !== "..", "a file name"),
  ),
  metrics: v.optional(v.record(v.string(), v.number())),
});

const _Outcome = v.object({
  id: v.string(),
  success: v.picklist([0, 1]),
  return: v.number(),
  steps: v.pipe(v.number(), v.integer(), v.minValue(0)),
});

const _Evaluate = v.object({ outcomes: v.array(_Outcome) });

/** The first issue of a failed parse, as `path: message`. */
function _issue(r: { issues: readonly v.BaseIssue<unknown>[] }): string {
  const i = r.issues[0]!;
  const path = v.getDotPath(i);
  return `${path ? `${path}: ` : ""}${i.message}`;
}

/** The number at a dotted path of a configuration, or undefined. */
export function getPath(config: unknown, path: string): unknown {
  let x: unknown = config;
  for (const k of path.split(".")) {
    if (x === null || typeof x !== "object" || Array.isArray(x)) {
      return undefined;
    }
    x = (x as Record<string, unknown>)[k];
  }
  return x;
}

/** A copy of `config` with `value` at the dotted `path`. */
export function setPath(
  config: ProgramConfig,
  path: string,
  value: number,
): ProgramConfig {
  const [k, ...rest] = path.split(".") as [string, ...string[]];
  if (rest.length === 0) return { ...config, [k]: value };
  const inner = config[k];
  return {
    ...config,
    [k]: setPath(
      inner !== null && typeof inner === "object" && !Array.isArray(inner)
        ? inner as ProgramConfig
        : {},
      rest.join("."),
      value,
    ),
  };
}

/**
 * Why `config` is outside the space `dims` declares (the first problem), or
 * undefined when it is inside.
 */
export function configProblem(
  config: unknown,
  dims: readonly Dimension[],
): string | undefined {
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    return "a configuration is a JSON object";
  }
  for (const d of dims) {
    const x = getPath(config, d.path);
    if (typeof x !== "number" || !Number.isFinite(x)) {
      return `${d.path} must be a number in [${d.min}, ${d.max}], got ${
        JSON.stringify(x) ?? "nothing"
      }`;
    }
    if (x < d.min || x > d.max) {
      return `${d.path} = ${x} is outside [${d.min}, ${d.max}]`;
    }
    if (d.integer && !Number.isInteger(x)) {
      return `${d.path} = ${x} must be a whole number`;
    }
  }
  return undefined;
}

/** Options of {@linkcode ProgramClient}. */
export interface ProgramClientOptions {
  /** The experiment file's folder: the program runs there. */
  readonly baseDir: string;
  /** Receives the program's stderr lines. */
  readonly log?: (line: string) => void;
  /** Aborting it stops the program. */
  readonly signal?: AbortSignal;
  /** Reads environment variables. @default Deno.env.get */
  readonly getEnv?: (name: string) => string | undefined;
}

/**
 * Sends protocol requests to one family program and checks every reply.
 *
 * @example
 * Not run: it starts a Python program; the program family's tests run one.
 * ```ts ignore
 * const client = new ProgramClient({ command: ["python3", "lake.py"], timeout: 60, inputs: [], env: [] }, { baseDir: "." });
 * const family = await client.describe();
 * const instances = await client.generate(family.presets.easy!, 1, 8);
 * ```
 */
export class ProgramClient {
  /** How the program is run. */
  readonly spec: ProgramSpec;
  #options: ProgramClientOptions;
  #env: Record<string, string>;
  #described: FamilyDescription | undefined;
  /** Requests sent so far. */
  requests = 0;

  /** Makes a client; nothing runs yet. */
  constructor(spec: ProgramSpec, options: ProgramClientOptions) {
    this.spec = spec;
    this.#options = options;
    const get = options.getEnv ?? ((n: string) => Deno.env.get(n));
    this.#env = {};
    for (const n of ["PATH", "HOME", "LANG", "TMPDIR", ...spec.env]) {
      const x = get(n);
      if (x !== undefined) this.#env[n] = x;
    }
  }

  /** The program's script (its first argument with a file extension), else the program. */
  get program(): string {
    const script = this.spec.command.slice(1).find((a) =>
      /\.[A-Za-z0-9]+$/.test(a) && !a.startsWith("-")
    );
    return (script ?? this.spec.command[0]!).split("/").at(-1)!;
  }

  /** The program as messages name it: `family program lake.py`. */
  get label(): string {
    return `family program ${this.program}`;
  }

  #fail(request: string, why: string): never {
    throw new ProgramFamilyError(`${this.label} (${request}): ${why}`);
  }

  #callOptions(): ProgramCallOptions {
    return {
      cwd: this.#options.baseDir,
      env: this.#env,
      timeoutMs: Math.round(this.spec.timeout * 1000),
      name: this.program,
      ...(this.#options.log ? { log: this.#options.log } : {}),
      ...(this.#options.signal ? { signal: this.#options.signal } : {}),
    };
  }

  /** Sends one request and returns the raw reply. */
  async request(
    request: string,
    fields: Record<string, unknown> = {},
  ): Promise<unknown> {
    this.requests++;
    try {
      return await callProgram(
        this.spec.command,
        { envsmith: PROTOCOL_VERSION, request, ...fields },
        this.#callOptions(),
      );
    } catch (e) {
      if (e instanceof ProgramCallError) this.#fail(request, e.message);
      throw e;
    }
  }

  /** {@linkcode ProgramClient.request}, waiting (for synchronous hooks). */
  requestSync(request: string, fields: Record<string, unknown> = {}): unknown {
    this.requests++;
    const { signal: _, ...options } = this.#callOptions();
    try {
      return callProgramSync(
        this.spec.command,
        { envsmith: PROTOCOL_VERSION, request, ...fields },
        options,
      );
    } catch (e) {
      if (e instanceof ProgramCallError) this.#fail(request, e.message);
      throw e;
    }
  }

  #parse<T>(
    request: string,
    schema: v.GenericSchema<unknown, T>,
    reply: unknown,
    fix: string,
  ): T {
    const r = v.safeParse(schema, reply);
    if (!r.success) {
      this.#fail(
        request,
        `the reply does not follow the protocol (${_issue(r)}); ${fix}`,
      );
    }
    return r.output;
  }

  /** The family's name, space and presets (asked once per client). */
  async describe(): Promise<FamilyDescription> {
    return this.#described ??= this.readDescribe(
      await this.request("describe"),
    );
  }

  /** {@linkcode ProgramClient.describe}, waiting. */
  describeSync(): FamilyDescription {
    return this.#described ??= this.readDescribe(this.requestSync("describe"));
  }

  /** Checks a `describe` reply. */
  readDescribe(reply: unknown): FamilyDescription {
    const d = this.#parse(
      "describe",
      _Describe,
      reply,
      "reply {name, description, dimensions: [{path, description, min, max, step, integer, harder}], presets: {NAME: config}}",
    ) as FamilyDescription;
    for (const dim of d.dimensions) {
      if (!(dim.min < dim.max)) {
        this.#fail(
          "describe",
          `dimension ${dim.path} has min ${dim.min} >= max ${dim.max}; declare min < max`,
        );
      }
    }
    if (Object.keys(d.presets).length === 0) {
      this.#fail(
        "describe",
        "no presets; declare at least one (easy, medium, hard)",
      );
    }
    for (const [name, c] of Object.entries(d.presets)) {
      const why = configProblem(c, d.dimensions);
      if (why) {
        this.#fail(
          "describe",
          `preset ${name} is outside its own space: ${why}; correct the preset or the dimension`,
        );
      }
    }
    if (d.instance_schema !== undefined) {
      try {
        new Ajv({ strict: false }).compile(d.instance_schema as object);
      } catch (e) {
        this.#fail(
          "describe",
          `instance_schema is not a JSON Schema (${(e as Error).message})`,
        );
      }
    }
    return d;
  }

  /**
   * Generates `count` instances of `config`, checked: exactly `count`,
   * unique ids, each matching the family's `instance_schema`.
   */
  async generate(
    config: ProgramConfig,
    seed: number,
    count: number,
  ): Promise<ProgramInstance[]> {
    const d = await this.describe();
    this.checkConfig(config, d);
    return this.readGenerate(
      await this.request("generate", { config, seed, count }),
      count,
      d,
    );
  }

  /** {@linkcode ProgramClient.generate}, waiting. */
  generateSync(
    config: ProgramConfig,
    seed: number,
    count: number,
  ): ProgramInstance[] {
    const d = this.describeSync();
    this.checkConfig(config, d);
    return this.readGenerate(
      this.requestSync("generate", { config, seed, count }),
      count,
      d,
    );
  }

  /** @throws {ProgramFamilyError} for a configuration outside the space. */
  checkConfig(config: unknown, d: FamilyDescription): void {
    const why = configProblem(config, d.dimensions);
    if (why) {
      throw new ProgramFamilyError(
        `${this.label}: configuration outside the family's space: ${why}; correct it (presets: ${
          Object.keys(d.presets).join(", ")
        })`,
      );
    }
  }

  /** Checks a `generate` reply: exactly `count` instances, unique ids, the family's `instance_schema`. */
  readGenerate(
    reply: unknown,
    count: number,
    d: FamilyDescription,
  ): ProgramInstance[] {
    const { instances } = this.#parse(
      "generate",
      _Generate,
      reply,
      "reply {instances: [{id: STRING, ...}]}",
    );
    if (instances.length !== count) {
      this.#fail(
        "generate",
        `asked for ${count} instances, got ${instances.length}; return exactly count`,
      );
    }
    const seen = new Set<string>();
    for (const i of instances) {
      if (seen.has(i.id)) {
        this.#fail(
          "generate",
          `instance id ${i.id} appears twice; ids must be unique (e.g. name-SEED-INDEX)`,
        );
      }
      seen.add(i.id);
    }
    if (d.instance_schema !== undefined) {
      const check = new Ajv({ strict: false, allErrors: false }).compile(
        d.instance_schema as object,
      );
      for (const i of instances) {
        if (!(check as (x: unknown) => boolean)(i)) {
          const e = check.errors?.[0];
          this.#fail(
            "generate",
            `instance ${i.id} fails the family's own instance_schema (${
              e?.instancePath || "/"
            } ${e?.message ?? ""}); fix the generator or the schema`,
          );
        }
      }
    }
    return instances as ProgramInstance[];
  }

  /**
   * Trains from `checkpoint` (a path, or null for a fresh start) on
   * `instances` within `budget` steps; the program writes its checkpoint
   * into `outDir` and names the file.
   */
  async train(fields: {
    instances: readonly ProgramInstance[];
    checkpoint: string | null;
    outDir: string;
    seed: number;
    budget: number;
  }): Promise<{ file: string; metrics: Record<string, number> }> {
    const reply = this.#parse(
      "train",
      _Train,
      await this.request("train", {
        instances: fields.instances,
        checkpoint: fields.checkpoint,
        out_dir: fields.outDir,
        seed: fields.seed,
        budget: fields.budget,
      }),
      "reply {checkpoint: FILE_NAME, metrics?: {NAME: NUMBER}} after writing FILE_NAME into out_dir",
    );
    return { file: reply.checkpoint, metrics: reply.metrics ?? {} };
  }

  /** Evaluates `checkpoint` on `instances`: one outcome per instance, in their order. */
  async evaluate(fields: {
    instances: readonly ProgramInstance[];
    checkpoint: string | null;
    seed: number;
  }): Promise<Outcome[]> {
    const { outcomes } = this.#parse(
      "evaluate",
      _Evaluate,
      await this.request("evaluate", {
        instances: fields.instances,
        checkpoint: fields.checkpoint,
        seed: fields.seed,
      }),
      "reply {outcomes: [{id, success: 0|1, return: NUMBER, steps: INTEGER}]}, one per instance",
    );
    const want = fields.instances.map((i) => i.id);
    const got = new Map(outcomes.map((o) => [o.id, o]));
    if (outcomes.length !== want.length || got.size !== want.length) {
      this.#fail(
        "evaluate",
        `${want.length} instances sent, ${outcomes.length} outcomes (${got.size} distinct ids) returned; return one outcome per instance`,
      );
    }
    return want.map((id) => {
      const o = got.get(id);
      if (!o) {
        this.#fail(
          "evaluate",
          `no outcome for instance ${id}; return one outcome per instance, with its id`,
        );
      }
      return o as Outcome;
    });
  }
}
