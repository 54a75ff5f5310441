/**
 * Shared code of the learned engineer's node kinds: one-line user errors,
 * list parameters, and transitions and states to and from JSON.
 *
 * @module
 */
import * as v from "valibot";
import type { Json } from "@envsmith/engine/kind";
import { UserError } from "@envsmith/engine/errors";
import { parseEnvConfig } from "../schemas/env_config.ts";
import { parseFindings } from "../schemas/findings.ts";
import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
import type { Change } from "../engineer/learned_features.ts";
import {
  type HindsightState,
  TestSplitError,
  type Transition,
  TransitionInputError,
} from "../engineer/learned_data.ts";
import { EngineerConfigError } from "../engineer/engineer_kind.ts";

/** The family the learned kinds work on. */
export const learnedFamily = mapfFrozenLake;

/** Runs `f`, turning data errors into one-line user errors. */
export function userErrors<T>(f: () => T): T {
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

/** A list parameter with its description. */
export const listParam = (what: string) =>
  v.pipe(v.array(v.unknown(), `${what} must be a list`), v.description(what));

/** A state as JSON. */
export function stateJson(t: Transition | HindsightState) {
  return {
    group: t.group,
    stage: t.stage,
    config: t.config,
    findings: t.findings,
    history: t.history,
  } as unknown as { [k: string]: Json };
}

/** A transition (or state) read back from a node value. */
export function transitionFrom(x: unknown, where: string): Transition {
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
