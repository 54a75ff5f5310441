/**
 * The `learned` engineer's data: transitions (the context an engineer saw,
 * the configuration, the change it made, and the next stage's learning
 * progress) and hindsight states (one state, every candidate change tried
 * for a stage), and the guard that keeps the test split out of both.
 *
 * Learning progress is the change of held-out success between the policy
 * a stage trained and the one the next stage trained on the changed
 * configuration, held-out meaning the `validation` split: an evaluate
 * value that played a `test` split instance is refused
 * ({@linkcode TestSplitError}).
 *
 * @module
 */
import { canonicalJson } from "@envsmith/engine/hash";
import { type AnyEnvConfig, parseEnvConfig } from "../schemas/env_config.ts";
import { type Findings, parseFindings } from "../schemas/findings.ts";
import {
  buildContext,
  type BuiltContext,
  type ContextType,
} from "./context.ts";
import type { EnvironmentFamily } from "../families/family.ts";
import {
  candidateChanges,
  type Change,
  changeLabel,
  changeSlot,
  changeSlots,
  contextFeatures,
  modelInput,
} from "./learned_features.ts";

/** Test-split instance ids end in `-test2-N` (`mapf/generator.ts`). */
const _TEST_ID = /-test2-\d+$/;

/** An evaluate value with a `test` split instance in it, refused as data. */
export class TestSplitError extends TypeError {
  /** Build the error. */
  constructor(where: string, id: string) {
    super(
      `${where}: instance ${id} is from the test split; learned-engineer data is measured on the validation split only (generate the held-out suites with split: validation)`,
    );
    this.name = "TestSplitError";
  }
}

/** Bad transition input, in one line naming the place. */
export class TransitionInputError extends TypeError {
  /** Build the error. */
  constructor(message: string) {
    super(message);
    this.name = "TransitionInputError";
  }
}

/**
 * The held-out success of an evaluate value, after checking that none of
 * its instances is from the test split (and that it lists them, so the
 * check can be made).
 *
 * @throws {TestSplitError} for a test-split instance.
 * @throws {TransitionInputError} for a value that is not an evaluate node's.
 */
export function heldoutSuccess(value: unknown, where: string): number {
  const v = value as {
    success_rate?: unknown;
    per_instance?: { id?: unknown }[];
  } | null;
  if (
    v === null || typeof v !== "object" || typeof v.success_rate !== "number" ||
    !Array.isArray(v.per_instance)
  ) {
    throw new TransitionInputError(
      `${where}: expected an evaluate node's value (success_rate and per_instance); pass the stage's held-out evaluate node`,
    );
  }
  for (const x of v.per_instance) {
    const id = String(x?.id ?? "");
    if (_TEST_ID.test(id)) throw new TestSplitError(where, id);
  }
  return v.success_rate;
}

/** The state an engineer decided in. */
export interface State {
  /** Curriculum the state belongs to (a held-out split never cuts one). */
  readonly group: string;
  /** Stage index of the redesign. */
  readonly stage: number;
  /** The configuration trained on in that stage. */
  readonly config: AnyEnvConfig;
  /** That stage's diagnosis. */
  readonly findings: Findings;
  /** Earlier stages' diagnoses, oldest first (what `full` reads). */
  readonly history: Findings[];
}

/** One transition. */
export interface Transition extends State {
  /** The change made, or `null` when it was not one candidate step. */
  readonly change: Change | null;
  /** Held-out success after the next stage minus after this one. */
  readonly progress: number;
}

/** One state with every tried candidate's progress. */
export interface HindsightState extends State {
  /** Per tried candidate: its change, label and progress. */
  readonly outcomes: { change: Change; label: string; progress: number }[];
}

/**
 * The candidate change that leads from `from` to `to` on `family`, or
 * `null` when `to` is no single candidate step of `from`.
 */
export function matchChange(
  family: EnvironmentFamily,
  from: unknown,
  to: unknown,
): Change | null {
  const target = canonicalJson(parseEnvConfig(to));
  for (const c of candidateChanges(family, parseEnvConfig(from))) {
    if (canonicalJson(parseEnvConfig(c.config)) === target) return c.change;
  }
  return null;
}

/**
 * The transitions of one curriculum of K stages: `findings[i]` (stage i),
 * `configs[i]` (trained on in stage i; K+1 of them, the last one the
 * configuration the last redesign chose) and `heldout[i]` (K+1 evaluate
 * values on the validation split: stage i's policy, the last after
 * training on `configs[K]`).
 *
 * @throws {TestSplitError} when a held-out value played a test instance.
 * @throws {TransitionInputError} when the lists do not line up.
 */
export function curriculumTransitions(
  family: EnvironmentFamily,
  input: {
    readonly group: string;
    readonly findings: readonly unknown[];
    readonly configs: readonly unknown[];
    readonly heldout: readonly unknown[];
  },
): Transition[] {
  const k = input.findings.length;
  if (input.configs.length !== k + 1 || input.heldout.length !== k + 1) {
    throw new TransitionInputError(
      `transitions ${input.group}: ${k} findings need ${k + 1} configs and ${
        k + 1
      } held-out evaluations (got ${input.configs.length} and ${input.heldout.length}); list the starting config and the last stage's too`,
    );
  }
  const findings = input.findings.map((f, i) =>
    parseFindings(f, `findings[${i}]`)
  );
  const success = input.heldout.map((h, i) =>
    heldoutSuccess(h, `transitions ${input.group}: heldout[${i}]`)
  );
  const out: Transition[] = [];
  for (let i = 0; i < k; i++) {
    out.push({
      group: input.group,
      stage: i,
      config: parseEnvConfig(input.configs[i]),
      findings: findings[i]!,
      history: findings.slice(0, i),
      change: matchChange(family, input.configs[i], input.configs[i + 1]),
      progress: success[i + 1]! - success[i]!,
    });
  }
  return out;
}

/** The context an engineer of type `type` saw in `state`. */
export function stateContext(type: ContextType, state: State): BuiltContext {
  return buildContext(type, state.findings, state.config, {
    history: state.history.map((f) => ({ findings: f })),
    stage: state.stage,
  });
}

/**
 * The model's rows for context type `type`: one per transition whose
 * change is a candidate step (others are left out and counted).
 */
export function trainingRows(
  family: EnvironmentFamily,
  type: ContextType,
  transitions: readonly Transition[],
): {
  xs: number[][];
  ys: number[];
  groups: string[];
  names: string[];
  skipped: number;
} {
  const slots = changeSlots(family);
  const xs: number[][] = [];
  const ys: number[] = [];
  const groups: string[] = [];
  let names: string[] = [];
  let skipped = 0;
  for (const t of transitions) {
    const slot = t.change === null ? -1 : changeSlot(family, t.change);
    if (slot < 0) {
      skipped++;
      continue;
    }
    const f = contextFeatures(type, stateContext(type, t).json, family);
    names = f.names;
    xs.push(modelInput(f.values, slot, slots, t.change!.dir));
    ys.push(t.progress);
    groups.push(t.group);
  }
  return { xs, ys, groups, names, skipped };
}

/** A JSON form of a change, for node values. */
export function changeJson(
  c: Change | null,
): { dim: string | null; dir: number; label: string } | null {
  return c === null ? null : { dim: c.dim, dir: c.dir, label: changeLabel(c) };
}
