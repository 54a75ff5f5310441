/**
 * Readiness: whether this machine can run the nodes a plan would run, asked
 * of their kinds (`NodeKind.ready`) by `plan`, `run` and
 * `run-node FILE NODE`, never by `tables`, `report` or anything that only
 * reads the cache. What a node needs of the machine (a Python environment, a GPU) is
 * kept out of its key, so the key, and the tables built on it, can be
 * computed anywhere.
 *
 * @module
 */
import { canonicalJson } from "../canonical.ts";
import { UserError } from "../errors.ts";
import type { GraphNode } from "../compile/experiment.ts";
import type { Plan, PlanItem } from "./plan.ts";

/**
 * This machine lacks what a node of the plan needs: one line naming the
 * node, what is missing and the fix.
 */
export class NotReadyError extends UserError {
  /** The node whose kind refused. */
  readonly node: string;
  /** The kind's line, without the node id. */
  readonly reason: string;
  /** Creates the error. */
  constructor(node: string, reason: string, more: number) {
    super(
      `${node}${
        more > 0 ? ` (and ${more} more node${more > 1 ? "s" : ""})` : ""
      }: ${reason}`,
    );
    this.name = "NotReadyError";
    this.node = node;
    this.reason = reason;
  }
}

/** Whether a plan item would run (a cached or skipped node needs nothing here). */
function _runs(it: PlanItem): boolean {
  return it.status === "run" || it.status === "blocked";
}

/**
 * The first refusal of the kinds of the nodes `plan` would run, with the
 * number of other nodes refused for the same reason, or undefined when every
 * kind is ready. Each kind is asked once per distinct literal parameters.
 */
export function readinessProblem(
  plan: Pick<Plan, "exp" | "items">,
): NotReadyError | undefined {
  const asked = new Map<string, string | null>();
  let first: { node: GraphNode; reason: string } | undefined;
  let more = 0;
  for (const it of plan.items) {
    const kind = it.node.kind;
    if (!kind.ready || !_runs(it)) continue;
    let memo: string;
    try {
      memo = `${kind.name}\0${canonicalJson(it.node.literal)}`;
    } catch {
      memo = `${kind.name}\0${it.node.id}`;
    }
    let reason = asked.get(memo);
    if (reason === undefined) {
      reason = kind.ready(it.node.literal, { baseDir: plan.exp.dir }) ?? null;
      asked.set(memo, reason);
    }
    if (reason === null) continue;
    if (first === undefined) first = { node: it.node, reason };
    else if (reason === first.reason) more++;
  }
  return first && new NotReadyError(first.node.id, first.reason, more);
}

/**
 * Refuses a plan whose nodes this machine cannot run.
 *
 * @throws {NotReadyError} one line: the first node refused, how many more,
 * what is missing and the fix.
 */
export function checkReadiness(plan: Pick<Plan, "exp" | "items">): void {
  const e = readinessProblem(plan);
  if (e) throw e;
}
