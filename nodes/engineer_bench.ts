/**
 * The `engineer.bench` node kind: one engineer's regret against the best
 * change in hindsight on held-out hindsight states. Like `redesign`, it is
 * built over an engineer registry and its code digest covers the chosen
 * engineer's module only.
 *
 * @module
 */
import * as v from "valibot";
import type { Json, NodeKind } from "@envsmith/engine/kind";
import {
  learnedFamily,
  listParam,
  transitionFrom,
  userErrors,
} from "./_learned_io.ts";
import { UserError } from "@envsmith/engine/errors";
import { CONTEXT_TYPES, type ContextType } from "../engineer/context.ts";
import type { HindsightState } from "../engineer/learned_data.ts";
import { benchEngineers } from "../engineer/learned_bench.ts";
import type { EngineerRegistry } from "../engineer/registry.ts";

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

/** The engineer block of literal parameters: its name and parameters, or null (a reference). */
function _engineerOf(
  literal: unknown,
): { name: string; params: Record<string, unknown>; context?: unknown } | null {
  const e = (literal as { engineer?: unknown } | null)?.engineer;
  if (typeof e === "string") {
    return e.startsWith("$") ? null : { name: e, params: {} };
  }
  if (e === null || typeof e !== "object" || Array.isArray(e)) return null;
  const { name, context, ...params } = e as Record<string, unknown>;
  if (typeof name !== "string" || name.startsWith("$")) return null;
  return { name, params, context };
}

/**
 * The `engineer.bench` kind over `engineers`: one engineer's regret on
 * hindsight states; its code is this module and the chosen engineer's.
 */
export function engineerBenchKind(
  engineers: EngineerRegistry,
): NodeKind<BenchParams, Json> {
  const kindOf = (literal: unknown) => {
    const chosen = _engineerOf(literal);
    if (chosen === null) {
      throw new UserError(
        "engineer.bench: the engineer must be written literally (or given by the matrix): its code is part of the key",
      );
    }
    const kind = engineers.get(chosen.name);
    if (kind === undefined) {
      throw new UserError(
        `engineer.bench: engineer "${chosen.name}" is not registered (engineers: ${
          engineers.names().join(", ")
        })`,
      );
    }
    return kind;
  };
  return {
    name: "engineer.bench",
    description:
      "The cheap engineer benchmark: regret of an engineer's choice against the best change in hindsight, on held-out hindsight states",
    params: v.strictObject({
      hindsight: listParam("hindsight nodes' values"),
      engineer: v.pipe(
        v.unknown(),
        v.description(
          "the engineer: NAME or { name, context?, ...parameters }",
        ),
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
    codeModules: (literal) => [kindOf(literal).module, learnedFamily.module],
    async run(p, ctx) {
      const states: HindsightState[] = p.hindsight.map((h, i) => {
        const o = h as Record<string, unknown>;
        const t = userErrors(() => transitionFrom(o, `hindsight[${i}]`));
        return { ...t, outcomes: o.outcomes as HindsightState["outcomes"] };
      });
      const chosen = _engineerOf(p);
      if (chosen === null) {
        throw new UserError(
          "engineer.bench: engineer must be a name or { name, ...parameters }",
        );
      }
      const { name, context, params } = chosen;
      const engineer = userErrors(() =>
        engineers.create(name, params, {
          family: learnedFamily,
          baseDir: ctx.baseDir,
          log: (l) => ctx.log(l),
        })
      );
      const label = String(name);
      const [r] = await benchEngineers(learnedFamily, states, [{
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
}
