/**
 * The `redesign.sizes` node kind: an engineer proposes the next per-size
 * form (schemas/size_form.ts) from the current one and a diagnosis.
 *
 * ```yaml
 * config:
 *   kind: redesign.sizes
 *   with:
 *     engineer: rules          # fixed | random | rules | band | llm (engineer/size_*.ts)
 *     # or { name: llm, llm: { base_url: http://127.0.0.1:11434/v1, model: qwen3:4b } }
 *     context: full            # none | stats | failures | behavior | full (default full)
 *     config: $prev.config     # the current form
 *     findings: $findings      # this stage's diagnosis (of instances drawn by generate.sizes)
 *     history: [...]           # earlier stages: { findings, config } (read by full)
 *     stage: $stage
 * ```
 *
 * The engineer sees the per-size context (`engineer/size_context.ts`); its
 * proposal is repaired by `clampSizeForm` (event `clamped`), and agents,
 * hole mode and horizon are always the current form's. Keys: this module
 * imports no engineer; `codeModules` adds the chosen engineer's module
 * graph only, and the `llm` engineer's prompts enter the key through its
 * fingerprint.
 *
 * Value: the next form (resolved). Report: engineer, context type,
 * rationale, the changes (`diff`: size, field, from, to), events, the
 * context fields read, and the `llm` tally and usage when a model was
 * asked.
 *
 * @module
 */
import * as v from "valibot";
import { didYouMean } from "@envsmith/engine/suggest";
import { UserError } from "@envsmith/engine/errors";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import {
  clampSizeForm,
  parseSizeForm,
  SIZE_KEYS,
  type SizeForm,
  SizeFormInputSchema,
} from "../schemas/size_form.ts";
import { type Findings, parseFindings } from "../schemas/findings.ts";
import { CONTEXT_TYPES, type ContextType } from "../engineer/context.ts";
import { EngineerConfigError } from "../engineer/engineer_kind.ts";
import { buildSizeContext } from "../engineer/size_context.ts";
import type {
  SizeEngineerKind,
  SizeProposal,
} from "../engineer/size_engineer.ts";

/** Parameters of the redesign.sizes kind. */
export interface RedesignSizesParams {
  /** A form engineer's name, or `{ name, context?, ...parameters }`. */
  readonly engineer: string | { name: string; [k: string]: unknown };
  /** What it sees; default `full`. */
  readonly context?: ContextType | undefined;
  /** The current form. */
  readonly config: unknown;
  /** This stage's findings. */
  readonly findings?: unknown;
  /** Earlier stages: findings, or `{ findings, config }`. */
  readonly history?: readonly unknown[] | undefined;
  /** Stage index. */
  readonly stage?: number | undefined;
  /** Seed. */
  readonly seed?: number | undefined;
}

/** One changed field of a form. */
export interface SizeChange {
  /** The size, or `form` for agents, holes, horizon. */
  readonly size: string;
  /** The field. */
  readonly field: string;
  /** Before. */
  readonly from: unknown;
  /** After. */
  readonly to: unknown;
}

/** The changes from one form to the next. */
export function diffSizeForms(a: SizeForm, b: SizeForm): SizeChange[] {
  const out: SizeChange[] = [];
  for (const f of ["agents", "holes"] as const) {
    if (a[f] !== b[f]) {
      out.push({ size: "form", field: f, from: a[f], to: b[f] });
    }
  }
  if (JSON.stringify(a.horizon) !== JSON.stringify(b.horizon)) {
    out.push({
      size: "form",
      field: "horizon",
      from: a.horizon,
      to: b.horizon,
    });
  }
  for (const k of SIZE_KEYS) {
    for (const f of ["data_ratio", "hole_ratio", "wait_ratio"] as const) {
      if (a.sizes[k][f] !== b.sizes[k][f]) {
        out.push({ size: k, field: f, from: a.sizes[k][f], to: b.sizes[k][f] });
      }
    }
  }
  return out;
}

function _engineerOf(
  params: unknown,
):
  | { name: string; context?: ContextType; own: Record<string, unknown> }
  | null {
  const e = (params as { engineer?: unknown } | null)?.engineer;
  if (typeof e === "string") {
    return e.startsWith("$") ? null : { name: e, own: {} };
  }
  if (e === null || typeof e !== "object" || Array.isArray(e)) return null;
  const { name, context, ...own } = e as Record<string, unknown>;
  if (typeof name !== "string" || name.startsWith("$")) return null;
  return {
    name,
    ...(typeof context === "string" ? { context: context as ContextType } : {}),
    own,
  };
}

/** The redesign.sizes kind over a list of form engineers. */
export function redesignSizesKind(
  engineers: readonly SizeEngineerKind[],
): NodeKind<RedesignSizesParams, Json> {
  const byName = new Map(engineers.map((e) => [e.name, e]));
  const names = engineers.map((e) => e.name);
  const kindOf = (literal: unknown): SizeEngineerKind => {
    const chosen = _engineerOf(literal);
    const kind = chosen ? byName.get(chosen.name) : undefined;
    if (!chosen || !kind) {
      throw new UserError(
        `engineer ${
          JSON.stringify(chosen?.name ?? null)
        } is not an engineer of redesign.sizes${
          chosen ? didYouMean(chosen.name, names) : ""
        } (engineers: ${names.join(", ")})`,
      );
    }
    return kind;
  };
  const engineerProblem = (e: unknown): string | null => {
    const chosen = _engineerOf({ engineer: e });
    if (!chosen) return null;
    const kind = byName.get(chosen.name);
    if (!kind) {
      return `unknown engineer ${JSON.stringify(chosen.name)}${
        didYouMean(chosen.name, names)
      } (redesign.sizes engineers: ${names.join(", ")})`;
    }
    const r = v.safeParse(kind.params, chosen.own);
    if (!r.success) {
      return `the ${kind.name} engineer: ${
        r.issues[0]?.message ?? "bad parameters"
      }`;
    }
    return null;
  };
  const params = v.strictObject({
    engineer: v.pipe(
      v.union([
        v.string(),
        v.looseObject({ name: v.string() }),
      ], "engineer must be a name or { name, ...parameters }"),
      v.check(
        (e) => engineerProblem(e) === null,
        (i) => engineerProblem(i.input) ?? "",
      ),
      v.description(
        `which engineer: ${names.join(", ")}, or { name, ...its parameters }`,
      ),
    ),
    context: v.optional(v.pipe(
      v.picklist(
        CONTEXT_TYPES,
        `context must be one of ${CONTEXT_TYPES.join(", ")}`,
      ),
      v.description(
        "what the engineer sees: none, stats, failures, behavior or full (default)",
      ),
    )),
    config: v.pipe(
      SizeFormInputSchema,
      v.description("the current per-size form (usually $prev.config)"),
    ),
    findings: v.optional(
      v.pipe(v.nullable(v.unknown()), v.description("this stage's diagnosis")),
    ),
    history: v.optional(
      v.pipe(
        v.array(v.unknown()),
        v.description(
          "earlier stages: findings or { findings, config }, oldest first (read by full)",
        ),
      ),
    ),
    stage: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(0),
        v.description("stage index"),
      ),
    ),
    seed: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.description("seed of engineers that draw random numbers"),
      ),
    ),
  });
  return {
    name: "redesign.sizes",
    description:
      "An engineer (fixed, random, rules, band, llm) proposes the next per-size form from a diagnosis per map size",
    params: params as unknown as NodeKind<RedesignSizesParams, Json>["params"],
    paramDocs: {
      engineer: `which engineer: ${
        names.join(", ")
      }, or { name, ...its parameters }`,
      context:
        "what the engineer sees: none, stats, failures, behavior or full (default)",
      config: "the current per-size form (usually $prev.config)",
      findings: "this stage's diagnosis (of instances drawn by generate.sizes)",
      history:
        "earlier stages: findings or { findings, config }, oldest first (read by full)",
      stage: "stage index",
      seed:
        "seed of engineers that draw random numbers (default: the node's seed)",
    },
    module: import.meta.url,
    codeModules(literal) {
      return [kindOf(literal).module];
    },
    fingerprint(literal, info) {
      const kind = kindOf(literal);
      try {
        return (kind.fingerprint?.(_engineerOf(literal)!.own, info) ??
          null) as Json;
      } catch (e) {
        // a mistake in the experiment (a server program that does not exist) is refused at plan
        if (e instanceof EngineerConfigError) throw new UserError(e.message);
        throw e;
      }
    },
    async run(p, ctx) {
      const result = await redesignSizes(p, p.seed ?? ctx.seed, engineers, {
        auxDir: ctx.auxDir,
        baseDir: ctx.baseDir,
        log: (line) => ctx.log(line),
        signal: ctx.signal,
      });
      ctx.log(result.rationale);
      return {
        value: result.form as unknown as Json,
        report: result.report as Json,
      };
    },
  };
}

/** Run one redesign (no engine; tests and the node). */
export async function redesignSizes(
  p: RedesignSizesParams,
  seed: number,
  engineers: readonly SizeEngineerKind[],
  env: {
    auxDir?: string;
    baseDir?: string;
    log?: (line: string) => void;
    signal?: AbortSignal;
    env?: (name: string) => string | undefined;
  } = {},
): Promise<
  { form: SizeForm; rationale: string; report: Record<string, unknown> }
> {
  const chosen = _engineerOf(p);
  const kind = engineers.find((e) => e.name === chosen?.name);
  if (!chosen || !kind) {
    throw new UserError(`unknown engineer ${JSON.stringify(chosen?.name)}`);
  }
  const current = parseSizeForm(p.config);
  const type = chosen.context ?? p.context ?? "full";
  const findings: Findings | null =
    p.findings === undefined || p.findings === null
      ? null
      : parseFindings(p.findings, "findings");
  const history = (p.history ?? []).map((item, i) => {
    const o = item as Record<string, unknown>;
    if (o && typeof o === "object" && "findings" in o && !("version" in o)) {
      return {
        findings: parseFindings(o.findings, `history[${i}].findings`),
        form: o.config ? parseSizeForm(o.config) : null,
      };
    }
    return { findings: parseFindings(item, `history[${i}]`), form: null };
  });
  const context = buildSizeContext(type, findings, current, {
    ...(p.stage === undefined ? {} : { stage: p.stage }),
    history,
  });
  let engineer;
  try {
    engineer = kind.create(v.parse(kind.params, chosen.own), {
      baseDir: env.baseDir ?? ".",
      log: env.log ?? (() => {}),
      ...(env.auxDir === undefined ? {} : { auxDir: env.auxDir }),
      ...(env.signal === undefined ? {} : { signal: env.signal }),
      ...(env.env === undefined ? {} : { env: env.env }),
    });
  } catch (e) {
    if (e instanceof EngineerConfigError) throw new UserError(e.message);
    throw e;
  }
  const proposal: SizeProposal = await engineer.propose({
    context,
    form: current,
    seed,
  });
  // the engineer's form, repaired; agents, holes and horizon stay the current form's
  const clamp = clampSizeForm({ sizes: proposal.form.sizes }, current);
  const form: SizeForm = { ...current, sizes: clamp.form.sizes };
  const events = [...proposal.events];
  if (clamp.adjustments.length > 0) {
    events.push({ type: "clamped", detail: clamp.adjustments.join("; ") });
  }
  return {
    form,
    rationale: proposal.rationale,
    report: {
      engineer: kind.name,
      context: type,
      rationale: proposal.rationale,
      diff: diffSizeForms(current, form),
      events,
      reads: proposal.reads,
      ...(proposal.llm ? { llm: proposal.llm } : {}),
      ...(proposal.usage ? { usage: proposal.usage } : {}),
      ...(proposal.report ?? {}),
    },
  };
}
