/**
 * A family written as a program: every hook of the
 * {@linkcode EnvironmentFamily} interface is a request of the program
 * protocol (`protocol.ts`, docs/environments.md), answered by the program.
 *
 * - `name`, `description`, `dimensions`, `presets`, `suites` come from one
 *   `describe`, asked when the family is made (so a broken program refuses
 *   the experiment where the family is loaded, in one line);
 * - `generate` asks `generate` and checks the reply (count, unique ids, the
 *   family's own `instance_schema`);
 * - `check`, `renderInstance` and `mutate` ask `check`, `render` and
 *   `mutate` when `describe` lists them in `requests`; otherwise `check`
 *   applies the `instance_schema`, `renderInstance` prints the instance's
 *   JSON, and the family has no mutation (ACCEL refuses it);
 * - `get`/`set` read and write the dimension's dotted path;
 * - diagnosis: success rate, mean return and steps of the outcomes, and a
 *   seeded sample of failures, each rendered.
 *
 * The hooks are synchronous, as the interface is: each request runs the
 * program in a worker under the same bounds as every program (time limit,
 * process group, output caps) while the caller waits.
 *
 * @example
 * Not run: it is a plugin module's body (an `export` and a Python program); examples/python_family runs one.
 * ```ts ignore
 * import { programFamily } from "./program_family.ts";
 * const program = new URL("./lake.py", import.meta.url);
 * export const families = [
 *   programFamily({ command: ["python3", program.pathname] }, { baseDir: ".", module: import.meta.url }),
 * ];
 * ```
 *
 * @module
 */
import * as v from "valibot";
import { Ajv } from "ajv";
import {
  clampToDimension,
  type EnvironmentFamily,
  type EpisodeOutcome,
  type FailureCase,
  type FamilySuite,
} from "../family.ts";
import {
  configProblem,
  type FamilyDescription,
  getPath,
  ProgramClient,
  type ProgramClientOptions,
  type ProgramConfig,
  type ProgramInstance,
  ProgramSpecSchema,
  setPath,
} from "./protocol.ts";
import { mulberry32Floats } from "../../mapf/rng.ts";

/** Longest JSON shown for an instance without a `render` request. */
const _RENDER_CHARS = 2000;

/** The statistics every program family's diagnosis gives. */
export function outcomeStatistics(
  episodes: readonly EpisodeOutcome[],
): Record<string, number> {
  const n = episodes.length;
  let ok = 0, ret = 0, steps = 0;
  for (const e of episodes) {
    ok += e.success ? 1 : 0;
    ret += e.return ?? 0;
    steps += e.steps ?? 0;
  }
  return n === 0
    ? { success_rate: 0, mean_return: 0, mean_steps: 0, episodes: 0 }
    : {
      success_rate: ok / n,
      mean_return: ret / n,
      mean_steps: steps / n,
      episodes: n,
    };
}

/** Options of {@linkcode programFamily}. */
export interface ProgramFamilyOptions extends ProgramClientOptions {
  /**
   * The module that makes the family (a plugin's `import.meta.url`): its
   * import graph is the family's code in keys. Name the program in it as
   * `new URL("./lake.py", import.meta.url)`, so the program's content is
   * part of that graph. @default this file
   */
  readonly module?: string;
}

/**
 * Makes the family the program at `spec.command` describes. `spec` takes
 * the `family:` block's form (`timeout`, `inputs`, `env` optional).
 *
 * @throws {ProgramFamilyError} when the program cannot describe itself.
 */
export function programFamily(
  spec: unknown,
  options: ProgramFamilyOptions,
): EnvironmentFamily<ProgramConfig, ProgramInstance, EpisodeOutcome> {
  const client = new ProgramClient(v.parse(ProgramSpecSchema, spec), options);
  const d: FamilyDescription = client.describeSync();
  const dims = d.dimensions;
  const has = new Set(d.requests);
  const validate = d.instance_schema === undefined
    ? undefined
    : new Ajv({ strict: false }).compile(d.instance_schema as object);
  const presetOf = (c: ProgramConfig | { preset: string }): ProgramConfig => {
    if (typeof c.preset === "string" && Object.keys(c).length === 1) {
      const p = d.presets[c.preset];
      if (p === undefined) {
        throw new RangeError(
          `${client.label}: no preset ${c.preset}; the family declares ${
            Object.keys(d.presets).join(", ")
          }`,
        );
      }
      return p;
    }
    return c as ProgramConfig;
  };
  const render = (i: ProgramInstance): string => {
    if (has.has("render")) {
      const r = client.requestSync("render", { instance: i }) as {
        text?: unknown;
      };
      if (typeof r?.text === "string") return r.text;
    }
    const s = JSON.stringify(i);
    return s.length > _RENDER_CHARS ? `${s.slice(0, _RENDER_CHARS)}...` : s;
  };
  const family: EnvironmentFamily<
    ProgramConfig,
    ProgramInstance,
    EpisodeOutcome
  > = {
    name: d.name,
    description: d.description,
    module: options.module ?? import.meta.url,
    schema: v.pipe(
      v.record(v.string(), v.unknown()),
      v.check(
        (c) => configProblem(c, dims) === undefined,
        (issue) => configProblem(issue.input, dims) ?? "outside the space",
      ),
    ),
    dimensions: dims,
    presets: d.presets,
    get(config, path) {
      const x = getPath(config, path);
      if (typeof x !== "number") {
        throw new RangeError(
          `${d.name}: ${path} is not a number in this configuration`,
        );
      }
      return x;
    },
    set(config, path, value) {
      const dim = dims.find((x) => x.path === path);
      if (dim === undefined) {
        throw new RangeError(`family ${d.name} has no dimension "${path}"`);
      }
      return setPath(config, path, clampToDimension(dim, value));
    },
    generate: (config, seed, count) => client.generateSync(config, seed, count),
    check(instance) {
      if (has.has("check")) {
        const r = client.requestSync("check", { instance }) as {
          problem?: unknown;
        };
        if (typeof r?.problem === "string") return r.problem;
        return undefined;
      }
      if (validate && !(validate as (x: unknown) => boolean)(instance)) {
        const e = validate.errors?.[0];
        return `fails the family's instance_schema (${e?.instancePath || "/"} ${
          e?.message ?? ""
        })`;
      }
      return undefined;
    },
    instanceId: (i) => i.id,
    renderInstance: render,
    renderConfig: (c) =>
      dims.map((x) => `${x.path}=${JSON.stringify(getPath(c, x.path))}`).join(
        ", ",
      ),
    suites: Object.fromEntries(
      Object.entries(d.suites).map(([name, s]) => [
        name,
        {
          description: s.description,
          split: s.split,
          instances: (count?: number) =>
            client.generateSync(presetOf(s.config), s.seed, count ?? s.count),
        } satisfies FamilySuite<ProgramInstance>,
      ]),
    ),
    diagnosis: {
      statistics: outcomeStatistics,
      failureCases(episodes, { count, seed }): FailureCase[] {
        const failed = episodes.filter((e) => !e.success);
        const rnd = mulberry32Floats(seed);
        for (let i = failed.length - 1; i > 0; i--) {
          const j = Math.floor(rnd() * (i + 1));
          [failed[i], failed[j]] = [failed[j]!, failed[i]!];
        }
        return failed.slice(0, count).map((e) => ({
          instance: e.instance,
          failure: e.failure ?? "failure",
          text: `instance ${e.instance}: ${e.failure ?? "failed"}${
            e.return !== undefined ? `, return ${e.return}` : ""
          }${e.steps !== undefined ? `, ${e.steps} steps` : ""}`,
        }));
      },
    },
  };
  if (has.has("mutate")) {
    family.mutate = (instance, rng, seed) => {
      const r = client.requestSync("mutate", {
        instance,
        seed: (seed ^ rng.int(0x7fffffff)) >>> 0,
      }) as { instance?: unknown };
      if (r?.instance === null || r?.instance === undefined) return null;
      const [m] = client.readGenerate({ instances: [r.instance] }, 1, d);
      return m!;
    };
  }
  return family;
}
