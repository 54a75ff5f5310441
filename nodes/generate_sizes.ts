/**
 * The `generate.sizes` node kind: training instances from a per-size form
 * (the paper's configuration space, `schemas/size_form.ts`).
 *
 * ```yaml
 * envs: { kind: generate.sizes, with: { config: $prev.config, count: 256, seed: $seed, stream: $stage } }
 * ```
 *
 * Parameters: `config` (the form), `count` (default 256), `seed` (default
 * 0), `stream` (an independent stream under the same seed, as for
 * `generate`), `max_attempts` (draws per instance, default 400).
 *
 * The form is checked before anything runs: a ratio outside its bounds, a
 * board too small for the agents, and a wait ratio that no draw of that
 * size reaches (a probe of up to 200 seeded draws per wait class,
 * `mapf/size_generator.ts`) are refused at `plan`, each with its reason.
 *
 * Value: `{ instances, count, config, form, summary }` like `generate`'s:
 * `config` is the form's equivalent mixture (one component per size and
 * wait class), so `diagnose` reports results per size and wait class;
 * `form` is the resolved form; `summary` has draws, rejection rate, mean
 * reference cost and the achieved wait ratio per size. Report: the
 * generation report, with rejected draws per reason (`needs_wait`,
 * `no_wait`, `cbs`, and the ordinary generator's) per size.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeContext, NodeKind } from "@envsmith/engine/kind";
import {
  drawnSizes,
  parseSizeForm,
  type SizeForm,
  SizeFormInputSchema,
  sizeFormMixture,
} from "../schemas/size_form.ts";
import { generateSizeForm, waitRatioProblem } from "../mapf/size_generator.ts";
import { instancesToJsonLines } from "../mapf/instance.ts";
import { mix32 } from "../mapf/rng.ts";

// As `generate` does (not imported from it, so that editing the suites
// leaves this kind's keys alone): instances above 64 KiB of JSON go to a
// blob, and `stream` mixes into the seed.
const INSTANCES_MEDIA = "application/x-ndjson";
const INLINE_LIMIT = 64 * 1024;

function streamSeed(seed: number, stream?: number): number {
  if (stream === undefined) return seed;
  return mix32(mix32(seed) ^ mix32(stream + 0x9e3779b9)) & 0x7fffffff;
}

function _formProblem(input: unknown): string | null {
  let form: SizeForm;
  try {
    form = parseSizeForm(input);
  } catch {
    return null; // reported by the schema itself
  }
  for (const key of drawnSizes(form)) {
    const why = waitRatioProblem(form, key);
    if (why) return `sizes.${key}: ${why}`;
  }
  return null;
}

/** The form, checked for ratios the generator cannot reach. */
export const ReachableSizeFormSchema = v.pipe(
  SizeFormInputSchema,
  v.check(
    (c) => _formProblem(c) === null,
    (i) => _formProblem(i.input) ?? "",
  ),
);

const _int = (name: string, min: number, max: number) =>
  v.pipe(
    v.number(`${name} must be an integer in ${min}..${max}`),
    v.integer(`${name} must be an integer in ${min}..${max}`),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );

/** Parameters of the generate.sizes kind. */
export const GenerateSizesParamsSchema = v.strictObject({
  config: ReachableSizeFormSchema,
  count: v.optional(_int("count", 1, 1_000_000)),
  seed: v.optional(_int("seed", 0, 0x7fffffff)),
  stream: v.optional(_int("stream", 0, 0x7fffffff)),
  max_attempts: v.optional(_int("max_attempts", 1, 100_000)),
});

/** Resolved parameters. */
export type GenerateSizesParams = v.InferOutput<
  typeof GenerateSizesParamsSchema
>;

/** One line per parameter (the JSON Schema's descriptions). */
export const GENERATE_SIZES_PARAM_DOCS: Readonly<Record<string, string>> = {
  config:
    "the per-size form: { agents, holes, horizon, sizes: { 3x3: { data_ratio, hole_ratio, wait_ratio }, ... } }",
  count: "how many instances to draw (default 256)",
  seed: "seed of the draws (default 0)",
  stream:
    "an independent stream of instances under the same seed (e.g. $stage)",
  max_attempts:
    "draws per instance before giving up (default 400): an instance that needs a wait is rarer on large boards",
};

/** Run the generator as the node does (tests, no engine). */
export function runGenerateSizes(
  p: GenerateSizesParams,
  options: {
    signal?: AbortSignal;
    onProgress?: (d: number, t: number) => void;
  } = {},
) {
  const form = parseSizeForm(p.config);
  const r = generateSizeForm(form, {
    count: p.count ?? 256,
    seed: streamSeed(p.seed ?? 0, p.stream),
    ...(p.max_attempts === undefined ? {} : { maxAttempts: p.max_attempts }),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  return { form, ...r };
}

/** The generate.sizes kind. */
export const kind: NodeKind<GenerateSizesParams> = {
  name: "generate.sizes",
  description:
    "Generate training instances from a per-size form (data, hole and wait ratio per map size), accepting draws by whether their CBS-optimal plan needs a wait",
  params: GenerateSizesParamsSchema,
  paramDocs: GENERATE_SIZES_PARAM_DOCS,
  module: import.meta.url,
  heavy: true,
  async run(p: GenerateSizesParams, ctx: NodeContext) {
    const { form, instances, report } = runGenerateSizes(p, {
      signal: ctx.signal,
      onProgress: (d, t) => {
        if (d === t || d % 32 === 0) ctx.progress(d, t);
      },
    });
    const lines = instancesToJsonLines(instances);
    let stored: Json;
    if (lines.length > INLINE_LIMIT) {
      const ref = await ctx.writeBlob(
        new TextEncoder().encode(lines),
        INSTANCES_MEDIA,
      );
      stored = { $blob: ref.$blob, size: ref.size, media: ref.media };
    } else {
      stored = JSON.parse(
        `[${lines.trimEnd().split("\n").filter((l) => l).join(",")}]`,
      ) as Json;
    }
    const wait: Record<string, number> = {};
    for (const [k, s] of Object.entries(report.sizes)) wait[k] = s!.wait_ratio;
    const summary = {
      count: instances.length,
      attempts: report.attempts,
      rejection_rate: report.rejection_rate,
      mean_soc: report.mean.soc,
      mean_makespan: report.mean.makespan,
      wait_ratio: wait,
    };
    ctx.log(
      `${instances.length} instances from ${report.attempts} draws (rejection rate ${report.rejection_rate}; rejected ${
        Object.entries(report.rejected).filter(([, n]) => n > 0).map((
          [r, n],
        ) => `${n} ${r}`).join(", ") || "none"
      })`,
    );
    return {
      value: {
        instances: stored,
        count: instances.length,
        config: sizeFormMixture(form) as unknown as Json,
        form: form as unknown as Json,
        summary,
      },
      report: { generation: report as unknown as Json },
    };
  },
};
