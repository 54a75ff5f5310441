/**
 * Node kinds of the `learned` engineer: its data, its fit and its
 * benchmark, all cached nodes, so an experiment rebuilds the engineer from
 * nothing (`experiments/ablate-learned.yaml`).
 *
 * - `transitions`: one curriculum's transitions (context, configuration,
 *   change, the next stage's progress on the validation split);
 * - `learned.candidate`: the i-th candidate change of a configuration (a
 *   hindsight branch trains on it);
 * - `hindsight`: one state with every tried candidate's progress;
 * - `learned.fit`: one model per context type, chosen by held-out error;
 * - `engineer.bench`: the regret of engineers' choices on hindsight states.
 *
 * Every held-out evaluation is checked: a test-split instance refuses the
 * node (`TestSplitError`), so no test instance enters the data.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import { UserError } from "@envsmith/engine/errors";
import { parseEnvConfig } from "../schemas/env_config.ts";
import { parseFindings } from "../schemas/findings.ts";
import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
import { CONTEXT_TYPES, type ContextType } from "../engineer/context.ts";
import {
  candidateChanges,
  type Change,
  changeLabel,
} from "../engineer/learned_features.ts";
import {
  changeJson,
  curriculumTransitions,
  heldoutSuccess,
  type HindsightState,
  matchChange,
  TestSplitError,
  type Transition,
  TransitionInputError,
} from "../engineer/learned_data.ts";
import { fitLearned } from "../engineer/learned_fit.ts";
import { benchEngineers } from "../engineer/learned_bench.ts";
import { engineers } from "./engineers.ts";
import { EngineerConfigError } from "../engineer/engineer_kind.ts";

const _family = mapfFrozenLake;

/** Runs `f`, turning data errors into one-line user errors. */
function _user<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (
      e instanceof TestSplitError || e instanceof TransitionInputError ||
      e instanceof EngineerConfigError || e instanceof RangeError
    ) throw new UserError(e.message);
    throw e;
  }
}

const _list = (what: string) =>
  v.pipe(v.array(v.unknown(), `${what} must be a list`), v.description(what));

/** Parameters of `transitions`. */
export interface TransitionsParams {
  /** Stage i's findings, K of them. */
  readonly findings: unknown[];
  /** Configurations trained on, K+1 (the start and each redesign's). */
  readonly configs: unknown[];
  /** Held-out evaluations on the validation split, K+1. */
  readonly heldout: unknown[];
  /** Name of the curriculum (held-out splits never cut one). */
  readonly group?: string | undefined;
}

/** A transition as JSON. */
function _stateJson(t: Transition | HindsightState) {
  return {
    group: t.group,
    stage: t.stage,
    config: t.config,
    findings: t.findings,
    history: t.history,
  } as unknown as { [k: string]: Json };
}

function _transitionFrom(x: unknown, where: string): Transition {
  const o = x as Record<string, unknown>;
  if (o === null || typeof o !== "object" || !("findings" in o)) {
    throw new TransitionInputError(
      `${where}: expected a transition (a transitions node's value rows)`,
    );
  }
  return {
    group: String(o.group),
    stage: Number(o.stage),
    config: parseEnvConfig(o.config),
    findings: parseFindings(o.findings, `${where}.findings`),
    history: ((o.history as unknown[]) ?? []).map((f, i) =>
      parseFindings(f, `${where}.history[${i}]`)
    ),
    change: o.change === null || o.change === undefined
      ? null
      : o.change as Change,
    progress: Number(o.progress),
  };
}

/** The `transitions` kind. */
export const transitions: NodeKind<TransitionsParams, Json> = {
  name: "transitions",
  description:
    "One curriculum's transitions for the learned engineer: context, config, change, next stage's held-out progress (validation split only)",
  params: v.strictObject({
    findings: _list("stage i's findings, K of them"),
    configs: _list(
      "configs trained on, K+1: the start and every redesign's output",
    ),
    heldout: _list(
      "held-out evaluate values on the validation split, K+1 (the last after training on the last config)",
    ),
    group: v.optional(v.pipe(
      v.string(),
      v.description("name of the curriculum (default: the node's id)"),
    )),
  }),
  paramDocs: {
    findings: "stage i's findings, K of them ($xcur.0.findings, ...)",
    configs: "configs trained on, K+1: the start and every redesign's output",
    heldout:
      "held-out evaluate values on the validation split, K+1 (the last after training on the last config)",
    group:
      "name of the curriculum (default: the node's id); a held-out split never cuts one",
  },
  module: import.meta.url,
  async run(p, ctx) {
    await Promise.resolve();
    const rows = _user(() =>
      curriculumTransitions(_family, {
        group: p.group ?? ctx.id,
        findings: p.findings,
        configs: p.configs,
        heldout: p.heldout,
      })
    );
    const value = {
      version: 1,
      rows: rows.map((t) => ({
        ..._stateJson(t),
        change: changeJson(t.change),
        progress: t.progress,
      })),
    } as unknown as Json;
    ctx.log(
      `${rows.length} transitions, ${
        rows.filter((t) => t.change !== null).length
      } single candidate steps; progress ${
        rows.map((t) => t.progress.toFixed(3)).join(" ")
      }`,
    );
    return ({
      value,
      report: {
        transitions: rows.length,
        steps: rows.filter((t) => t.change !== null).length,
        mean_progress: rows.reduce((a, t) => a + t.progress, 0) /
          Math.max(1, rows.length),
      },
    });
  },
};

/** The `learned.candidate` kind: the index-th candidate change of a config. */
export const candidate: NodeKind<{ config: unknown; index: number }, Json> = {
  name: "learned.candidate",
  description:
    "The index-th candidate change of a configuration (0 keep, then one step of one dimension up/down); past the last: keep",
  params: v.strictObject({
    config: v.pipe(v.unknown(), v.description("the current configuration")),
    index: v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.description("which candidate (0 = keep)"),
    ),
  }),
  paramDocs: {
    config: "the current configuration whose candidate changes are listed",
    index:
      "which candidate: 0 keep, then one step of one dimension up/down; past the last: keep",
  },
  module: import.meta.url,
  async run(p, ctx) {
    await Promise.resolve();
    const cs = _user(() => candidateChanges(_family, parseEnvConfig(p.config)));
    const c = cs[p.index] ?? cs[0]!;
    ctx.log(`candidate ${p.index}: ${c.label} (of ${cs.length})`);
    return ({
      value: c.config as unknown as Json,
      report: { label: c.label, candidates: cs.length },
    });
  },
};

/** Parameters of `hindsight`. */
export interface HindsightParams {
  /** The state's findings. */
  readonly findings: unknown;
  /** Earlier stages' findings. */
  readonly history?: unknown[] | undefined;
  /** The configuration trained on. */
  readonly config: unknown;
  /** The stage index. */
  readonly stage: number;
  /** The state's held-out evaluation (validation split). */
  readonly heldout: unknown;
  /** Per tried branch: its configuration and held-out evaluation after a stage on it. */
  readonly branches: { config: unknown; heldout: unknown }[];
  /** Name of the curriculum. */
  readonly group?: string | undefined;
}

/** The `hindsight` kind. */
export const hindsight: NodeKind<HindsightParams, Json> = {
  name: "hindsight",
  description:
    "One state with every tried candidate change's held-out progress after one stage (validation split only): the engineer benchmark's data",
  params: v.strictObject({
    findings: v.pipe(v.unknown(), v.description("the state's findings")),
    history: v.optional(_list("earlier stages' findings, oldest first")),
    config: v.pipe(v.unknown(), v.description("the configuration trained on")),
    stage: v.pipe(v.number(), v.integer(), v.minValue(0)),
    heldout: v.pipe(
      v.unknown(),
      v.description("the state's held-out evaluation (validation split)"),
    ),
    branches: v.pipe(
      v.array(v.strictObject({ config: v.unknown(), heldout: v.unknown() })),
      v.minLength(1),
      v.description(
        "per tried candidate: { config, heldout } after one stage on it",
      ),
    ),
    group: v.optional(v.string()),
  }),
  paramDocs: {
    findings: "the state's findings (the stage branched from)",
    history: "earlier stages' findings, oldest first (read by context full)",
    config: "the configuration trained on in the state's stage",
    stage: "the stage index of the state",
    heldout: "the state's held-out evaluation (validation split only)",
    branches: "per tried candidate: { config, heldout } after one stage on it",
    group: "name of the curriculum (default: the node's id)",
  },
  module: import.meta.url,
  async run(p, ctx) {
    await Promise.resolve();
    const state = _user(() => {
      const base = heldoutSuccess(p.heldout, `hindsight ${ctx.id}: heldout`);
      const seen = new Set<string>();
      const outcomes: HindsightState["outcomes"] = [];
      p.branches.forEach((b, i) => {
        const c = matchChange(_family, p.config, b.config);
        if (c === null) {
          throw new TransitionInputError(
            `hindsight ${ctx.id}: branches[${i}].config is not one candidate step of config; give learned.candidate nodes' values`,
          );
        }
        const h = heldoutSuccess(
          b.heldout,
          `hindsight ${ctx.id}: branches[${i}].heldout`,
        );
        const label = changeLabel(c);
        if (seen.has(label)) return; // a repeated candidate (past the last: keep)
        seen.add(label);
        outcomes.push({ change: c, label, progress: h - base });
      });
      return {
        group: p.group ?? ctx.id,
        stage: p.stage,
        config: parseEnvConfig(p.config),
        findings: parseFindings(p.findings, "findings"),
        history: (p.history ?? []).map((f, i) =>
          parseFindings(f, `history[${i}]`)
        ),
        outcomes,
      };
    });
    const best = state.outcomes.reduce((a, b) =>
      b.progress > a.progress ? b : a
    );
    ctx.log(
      `${state.outcomes.length} candidates; best ${best.label} ${
        best.progress.toFixed(3)
      }`,
    );
    return ({
      value: {
        version: 1,
        ..._stateJson(state),
        outcomes: state.outcomes as unknown as Json,
      } as unknown as Json,
      report: {
        candidates: state.outcomes.length,
        best: best.label,
        best_progress: best.progress,
      },
    });
  },
};

/** Parameters of `learned.fit`. */
export interface FitParams {
  /** `transitions` node values. */
  readonly transitions: unknown[];
  /** Context types to fit (default all five). */
  readonly contexts?: ContextType[] | undefined;
  /** Seed of the held-out split. */
  readonly seed?: number | undefined;
  /** Boosting rounds of the trees (default 60). */
  readonly rounds?: number | undefined;
}

/** The `learned.fit` kind. */
export const fit: NodeKind<FitParams, Json> = {
  name: "learned.fit",
  description:
    "Fit the learned engineer: one model of next-stage progress per context type, the model class chosen by held-out error",
  params: v.strictObject({
    transitions: _list("transitions nodes' values"),
    contexts: v.optional(v.pipe(
      v.array(v.picklist(CONTEXT_TYPES)),
      v.description("context types to fit (default all five)"),
    )),
    seed: v.optional(v.pipe(v.number(), v.integer())),
    rounds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  }),
  paramDocs: {
    transitions:
      "transitions nodes' values (every row a candidate step is fitted on)",
    contexts: "context types to fit, one model each (default all five)",
    seed: "seed of the held-out split that chooses the model class",
    rounds: "boosting rounds of the depth-2 trees (default 60)",
  },
  module: import.meta.url,
  async run(p, ctx) {
    await Promise.resolve();
    const rows: Transition[] = [];
    p.transitions.forEach((t, i) => {
      const r = (t as { rows?: unknown[] } | null)?.rows;
      if (!Array.isArray(r)) {
        throw new UserError(
          `learned.fit: transitions[${i}] is not a transitions node's value (no rows)`,
        );
      }
      r.forEach((x, j) =>
        rows.push(_user(() => _transitionFrom(x, `transitions[${i}][${j}]`)))
      );
    });
    const models = _user(() =>
      fitLearned(_family, rows, {
        seed: p.seed ?? ctx.seed,
        ...(p.contexts === undefined ? {} : { types: p.contexts }),
        ...(p.rounds === undefined ? {} : { gbt: { rounds: p.rounds } }),
      })
    );
    const byContext: { [k: string]: Json } = {};
    for (const [t, m] of Object.entries(models.models)) {
      ctx.log(
        `${t}: ${m!.chosen} on ${m!.rows} rows; held-out mse ${
          m!.trials.map((x) => `${x.name} ${x.mse.toPrecision(3)}`).join(", ")
        }`,
      );
      byContext[t] = {
        chosen: m!.chosen,
        rows: m!.rows,
        mse: Object.fromEntries(m!.trials.map((x) => [x.name, x.mse])),
      };
    }
    // one context type: its choice at the top (a table row per context)
    const first = Object.values(byContext)[0] as { [k: string]: Json };
    return ({
      value: models as unknown as Json,
      report: { ...first, by_context: byContext },
    });
  },
};

/** Parameters of `engineer.bench`. */
export interface BenchParams {
  /** `hindsight` nodes' values. */
  readonly hindsight: unknown[];
  /** The engineer: a name or `{ name, context?, ...parameters }`. */
  readonly engineer: unknown;
  /** Its context type (default full; the block's `context` wins). */
  readonly context?: ContextType | undefined;
  /** Seed of engineers that draw random numbers. */
  readonly seed?: number | undefined;
}

/** The `engineer.bench` kind: one engineer's regret on hindsight states. */
export const bench: NodeKind<BenchParams, Json> = {
  name: "engineer.bench",
  description:
    "The cheap engineer benchmark: regret of an engineer's choice against the best change in hindsight, on held-out hindsight states",
  params: v.strictObject({
    hindsight: _list("hindsight nodes' values"),
    engineer: v.pipe(
      v.unknown(),
      v.description("the engineer: NAME or { name, context?, ...parameters }"),
    ),
    context: v.optional(v.pipe(
      v.picklist(CONTEXT_TYPES),
      v.description("its context type (default full; the block's wins)"),
    )),
    seed: v.optional(v.pipe(v.number(), v.integer())),
  }),
  paramDocs: {
    hindsight: "hindsight nodes' values: the held-out states",
    engineer:
      "the engineer to score: NAME or { name, context?, ...parameters }",
    context: "its context type (default full; the block's context wins)",
    seed: "seed of engineers that draw random numbers",
  },
  module: import.meta.url,
  async run(p, ctx) {
    const states: HindsightState[] = p.hindsight.map((h, i) => {
      const o = h as Record<string, unknown>;
      const t = _user(() => _transitionFrom(o, `hindsight[${i}]`));
      return { ...t, outcomes: o.outcomes as HindsightState["outcomes"] };
    });
    const block = typeof p.engineer === "string"
      ? { name: p.engineer }
      : p.engineer as Record<string, unknown>;
    const { name, context, ...params } = block;
    const engineer = _user(() =>
      engineers.create(String(name), params, {
        family: _family,
        baseDir: ctx.baseDir,
        log: (l) => ctx.log(l),
      })
    );
    const label = String(name);
    const [r] = await benchEngineers(_family, states, [{
      label,
      context: (context as ContextType | undefined) ?? p.context ?? "full",
      engineer,
    }], p.seed ?? ctx.seed);
    const nan = (x: number) => Number.isFinite(x) ? x : null;
    ctx.log(
      `${label}: regret ${r!.regret.toFixed(4)} ± ${
        r!.regret_ci.toFixed(4)
      } (n ${r!.n}), best ${r!.best.toFixed(2)}, projected ${
        r!.projected.toFixed(2)
      }, choices ${JSON.stringify(r!.choices)}`,
    );
    const value = {
      states: states.length,
      n: r!.n,
      regret: nan(r!.regret),
      regret_sd: nan(r!.regret_sd),
      regret_ci: nan(r!.regret_ci),
      best: nan(r!.best),
      projected: nan(r!.projected),
      untried: r!.untried,
      choices: r!.choices,
    };
    return { value, report: {} };
  },
};

/** The learned engineer's node kinds. */
export const learnedKinds = [transitions, candidate, hindsight, fit, bench];
