/**
 * The generator of the per-size form (schemas/size_form.ts): the paper's
 * configuration space, drawn by accepting or rejecting instances by
 * whether their CBS-optimal solution needs a wait.
 *
 * A run of `count` instances:
 * 1. quotas: each drawn size gets `round(count * share)` instances (largest
 *    remainders, so they sum to `count`), and of those
 *    `round(n * wait_ratio)` need a wait and the rest need none; so a stage
 *    holds the asked ratios exactly, up to rounding;
 * 2. the quota slots are shuffled (seeded), so sizes interleave;
 * 3. slot `i` draws from its component (`sizeComponent`: the size's board,
 *    holes and agents) with the ordinary generator (mapf/generator.ts),
 *    solves the draw by CBS, decides whether it needs a wait
 *    (mapf/needs_wait.ts), and accepts it when that matches the slot's
 *    class; otherwise it draws again, up to `maxAttempts` draws.
 *
 * Every rejected draw is counted by reason: the ordinary generator's
 * (`space`, `placement`, `unsolved`, `horizon`), `cbs` (CBS could not decide
 * within its budget), `needs_wait` (the slot wanted an instance without a
 * wait and the draw needed one) and `no_wait` (the converse). Accepted
 * instances carry CBS's optimal sum of costs as their reference (solver
 * `cbs`), and their horizon is set from that plan's makespan. Instance `i`
 * is a pure function of `(form, seed, count, i)`.
 *
 * {@linkcode probeWaits} is the check `plan` runs before anything: a wait
 * ratio no draw of that size reaches is refused with the reason.
 *
 * @module
 */
import { configId } from "../schemas/env_config.ts";
import {
  drawnSizes,
  type FormComponent,
  formComponents,
  sizeComponent,
  type SizeForm,
  sizeFormId,
  type SizeKey,
} from "../schemas/size_form.ts";
import { checkCountAndSeed, generate, GenerationError } from "./generator.ts";
import { compileInstance, type Instance } from "./instance.ts";
import { needsWait } from "./needs_wait.ts";
import { hashString, mix32, Rng } from "./rng.ts";

/** Why a draw of the per-size generator was rejected. */
export type SizeRejection =
  | "space"
  | "placement"
  | "unsolved"
  | "horizon"
  | "cbs"
  | "needs_wait"
  | "no_wait";

/** Rejected draws per reason. */
export type SizeRejectionCounts = Record<SizeRejection, number>;

/** What happened at one size. */
export interface SizeReport {
  /** Instances accepted (the size's quota). */
  readonly accepted: number;
  /** Of those, instances that need a wait. */
  readonly need_wait: number;
  /** `need_wait / accepted` (the achieved wait ratio), 0 when none. */
  readonly wait_ratio: number;
  /** Draws made. */
  readonly attempts: number;
  /** Rejected draws per reason. */
  readonly rejected: SizeRejectionCounts;
}

/** What a run of the per-size generator did. */
export interface SizeGenerationReport {
  /** {@linkcode sizeFormId} of the form. */
  readonly form_id: string;
  /** Seed of the run. */
  readonly seed: number;
  /** Instances accepted. */
  readonly accepted: number;
  /** Draws made. */
  readonly attempts: number;
  /** Rejected draws per reason, all sizes. */
  readonly rejected: SizeRejectionCounts;
  /** Rejected draws / draws. */
  readonly rejection_rate: number;
  /** Per drawn size. */
  readonly sizes: Readonly<Partial<Record<SizeKey, SizeReport>>>;
  /** Mean reference (CBS) sum of costs and makespan. */
  readonly mean: { readonly soc: number; readonly makespan: number };
}

/** Options of {@linkcode generateSizeForm}. */
export interface SizeGenerateOptions {
  /** Number of instances. */
  count: number;
  /** Seed, `0 .. 2^31 - 1`. */
  seed: number;
  /** Draws per instance before giving up. @default 400 */
  maxAttempts?: number;
  /** Abort a long run. */
  signal?: AbortSignal;
  /** Called after each instance. */
  onProgress?: (done: number, total: number) => void;
}

/** A per-size generation that cannot succeed: which size, and why. */
export class SizeGenerationError extends RangeError {
  /** The size that failed. */
  readonly size: SizeKey;
  /** Statistics up to the failure. */
  readonly report: SizeGenerationReport;
  /** Build from a message and the data. */
  constructor(message: string, size: SizeKey, report: SizeGenerationReport) {
    super(message);
    this.name = "SizeGenerationError";
    this.size = size;
    this.report = report;
  }
}

function _zero(): SizeRejectionCounts {
  return {
    space: 0,
    placement: 0,
    unsolved: 0,
    horizon: 0,
    cbs: 0,
    needs_wait: 0,
    no_wait: 0,
  };
}

/**
 * The number of instances of each component for `count` instances: sizes
 * by largest remainders of `count * share`, then `round(n * wait_ratio)`
 * of a size's `n` in its wait class.
 */
export function sizeQuotas(form: SizeForm, count: number): number[] {
  const comps = formComponents(form);
  const sizes = drawnSizes(form);
  let total = 0;
  for (const k of sizes) total += form.sizes[k].data_ratio;
  const exact = sizes.map((k) => (count * form.sizes[k].data_ratio) / total);
  const n = exact.map(Math.floor);
  let left = count - n.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => ({ i, r: x - Math.floor(x) }))
    .sort((a, b) => b.r - a.r || a.i - b.i);
  for (let j = 0; left > 0; j++, left--) n[order[j % order.length]!.i]!++;
  const quotas = comps.map(() => 0);
  sizes.forEach((k, s) => {
    const wait = Math.round(n[s]! * form.sizes[k].wait_ratio);
    comps.forEach((c, i) => {
      if (c.size === k) quotas[i] = c.wait ? wait : n[s]! - wait;
    });
  });
  return quotas;
}

/** One draw of a component: an instance with its verdict, or a rejection. */
function _draw(
  c: FormComponent,
  seed: number,
): { instance: Instance; needs: boolean } | { reject: SizeRejection[] } {
  let drawn: Instance;
  const rejects: SizeRejection[] = [];
  try {
    const r = generate(c.config, { count: 1, seed, maxAttempts: 20 });
    for (const [k, n] of Object.entries(r.report.rejected)) {
      for (let j = 0; j < n; j++) rejects.push(k as SizeRejection);
    }
    drawn = r.instances[0]!;
  } catch (e) {
    if (!(e instanceof GenerationError)) throw e;
    for (const [k, n] of Object.entries(e.report.rejected)) {
      for (let j = 0; j < n; j++) rejects.push(k as SizeRejection);
    }
    return { reject: rejects };
  }
  const verdict = needsWait(compileInstance(drawn));
  if (!verdict) return { reject: [...rejects, "cbs"] };
  const { soc, makespan } = verdict.solution;
  const h = c.config.horizon;
  const horizon = "steps" in h
    ? h.steps
    : Math.max(1, Math.ceil(h.factor * makespan - 1e-9));
  if (makespan > horizon) return { reject: [...rejects, "horizon"] };
  return {
    needs: verdict.needs_wait,
    instance: {
      ...drawn,
      horizon,
      reference: { soc, makespan, solver: "cbs" },
    },
  };
}

function _seedOf(seed: number, index: number, attempt: number): number {
  return mix32(mix32(seed ^ 0x2545f491) ^ mix32(index * 7919 + attempt)) &
    0x7fffffff;
}

/**
 * Generate `count` instances of a per-size form.
 *
 * @throws {SizeGenerationError} when a slot's draws are all rejected.
 */
export function generateSizeForm(
  form: SizeForm,
  options: SizeGenerateOptions,
): { instances: Instance[]; report: SizeGenerationReport } {
  const { count, seed } = options;
  checkCountAndSeed(count, seed);
  const maxAttempts = options.maxAttempts ?? 400;
  const formId = sizeFormId(form);
  const comps = formComponents(form);
  const ids = comps.map((c) => configId(c.config));
  const quotas = sizeQuotas(form, count);
  const slots: number[] = [];
  quotas.forEach((q, i) => {
    for (let j = 0; j < q; j++) slots.push(i);
  });
  const order = new Rng(seed, count, hashString("sizes:order"));
  for (let i = slots.length - 1; i > 0; i--) {
    const j = order.int(i + 1);
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  const per = new Map<SizeKey, {
    accepted: number;
    need: number;
    attempts: number;
    rejected: SizeRejectionCounts;
  }>();
  for (const k of drawnSizes(form)) {
    per.set(k, { accepted: 0, need: 0, attempts: 0, rejected: _zero() });
  }
  let socSum = 0, makespanSum = 0;
  const instances: Instance[] = [];
  const report = (): SizeGenerationReport => {
    const rejected = _zero();
    let accepted = 0, attempts = 0;
    const sizes: Partial<Record<SizeKey, SizeReport>> = {};
    for (const [k, p] of per) {
      accepted += p.accepted;
      attempts += p.attempts;
      for (const r of Object.keys(rejected) as SizeRejection[]) {
        rejected[r] += p.rejected[r];
      }
      sizes[k] = {
        accepted: p.accepted,
        need_wait: p.need,
        wait_ratio: p.accepted === 0
          ? 0
          : Math.round((p.need / p.accepted) * 1e4) / 1e4,
        attempts: p.attempts,
        rejected: { ...p.rejected },
      };
    }
    const m = Math.max(1, instances.length);
    return {
      form_id: formId,
      seed,
      accepted,
      attempts,
      rejected,
      rejection_rate: attempts === 0
        ? 0
        : Math.round(((attempts - accepted) / attempts) * 1e4) / 1e4,
      sizes,
      mean: {
        soc: Math.round((socSum / m) * 1000) / 1000,
        makespan: Math.round((makespanSum / m) * 1000) / 1000,
      },
    };
  };
  for (let index = 0; index < slots.length; index++) {
    options.signal?.throwIfAborted();
    const ci = slots[index]!;
    const c = comps[ci]!;
    const p = per.get(c.size)!;
    let done = false;
    const local = _zero();
    for (let attempt = 0; attempt < maxAttempts && !done; attempt++) {
      const d = _draw(c, _seedOf(seed, index, attempt));
      const rejects = "reject" in d ? d.reject : [];
      p.attempts += rejects.length;
      for (const r of rejects) {
        p.rejected[r]++;
        local[r]++;
      }
      if ("reject" in d) continue;
      p.attempts++;
      if (d.needs !== c.wait) {
        const r: SizeRejection = d.needs ? "needs_wait" : "no_wait";
        p.rejected[r]++;
        local[r]++;
        continue;
      }
      p.accepted++;
      if (d.needs) p.need++;
      instances.push({
        ...d.instance,
        id: `${formId}-${seed}-${index}`,
        config: ids[ci]!,
        seed,
        index,
        stats: { ...d.instance.stats!, component: ci },
      });
      socSum += d.instance.reference!.soc;
      makespanSum += d.instance.reference!.makespan;
      done = true;
    }
    if (!done) {
      const parts = (Object.keys(local) as SizeRejection[])
        .filter((r) => local[r] > 0).map((r) => `${local[r]} ${r}`);
      const wanted = c.wait ? "needs a wait" : "needs no wait";
      throw new SizeGenerationError(
        `Cannot draw instance ${index} at size ${c.size} (an instance that ${wanted}): all ${maxAttempts} draws were rejected (${
          parts.join(", ")
        }); ${
          c.wait
            ? "lower sizes." + c.size + ".wait_ratio or hole_ratio"
            : "raise sizes." + c.size + ".wait_ratio or lower agents"
        }, or raise max_attempts`,
        c.size,
        report(),
      );
    }
    options.onProgress?.(index + 1, slots.length);
  }
  return { instances, report: report() };
}

/** What {@linkcode probeWaits} saw at one size. */
export interface WaitProbe {
  /** Probe draws made. */
  readonly draws: number;
  /** Probe draws that were solved. */
  readonly solved: number;
  /** Some draw needed a wait. */
  readonly wait: boolean;
  /** Some draw needed none. */
  readonly free: boolean;
}

const _probes = new Map<string, WaitProbe>();

/**
 * Look for one instance of size `key` that needs a wait (drawn from the
 * wait class's component) and one that needs none, up to `draws` draws
 * each (fixed seeds, memoised): the evidence `plan` uses to refuse a wait
 * ratio the generator cannot reach.
 */
export function probeWaits(
  form: SizeForm,
  key: SizeKey,
  draws = 200,
): WaitProbe {
  const memo = JSON.stringify([
    form.agents,
    form.holes,
    form.horizon,
    key,
    form.sizes[key].hole_ratio,
    draws,
  ]);
  const hit = _probes.get(memo);
  if (hit) return hit;
  let made = 0, solved = 0;
  const found = { wait: false, free: false };
  for (const wait of [true, false]) {
    const c: FormComponent = {
      size: key,
      wait,
      weight: 1,
      config: sizeComponent(form, key, wait),
    };
    for (let i = 0; i < draws && !(wait ? found.wait : found.free); i++) {
      made++;
      const d = _draw(c, _seedOf(0x51ed, i, wait ? 1 : 0));
      if ("reject" in d) continue;
      solved++;
      if (d.needs) found.wait = true;
      else found.free = true;
    }
  }
  const out = { draws: made, solved, ...found };
  _probes.set(memo, out);
  return out;
}

/**
 * Why a size's wait ratio cannot be reached (from {@linkcode probeWaits}),
 * or null: a positive ratio when no probe draw needed a wait, a ratio
 * below 1 when every one did, or no probe draw solvable at all.
 */
export function waitRatioProblem(form: SizeForm, key: SizeKey): string | null {
  const r = form.sizes[key];
  if (r.data_ratio === 0) return null;
  const p = probeWaits(form, key);
  const board =
    `a ${key} board with ${form.agents} agents and hole_ratio ${r.hole_ratio}`;
  if (p.solved === 0) {
    return `no probe draw of ${board} was solvable (${p.draws} draws); lower hole_ratio or agents, or set data_ratio 0`;
  }
  if (r.wait_ratio > 0 && !p.wait) {
    return `wait_ratio ${r.wait_ratio} cannot be reached: none of ${p.draws} probe draws of ${board} needed a wait (an optimal plan without a wait always existed); set wait_ratio 0, or lower hole_ratio`;
  }
  if (r.wait_ratio < 1 && !p.free) {
    return `wait_ratio ${r.wait_ratio} cannot be reached: every one of ${p.draws} probe draws of ${board} needed a wait; set wait_ratio 1, or lower agents`;
  }
  return null;
}
