/**
 * The Slurm executor: a backend of the remote-executor base (`remote.ts`)
 * that submits each ready node as an sbatch job running `run-node KEY`
 * against the shared cache directory (nodes that become ready together with
 * the same resources as one job array), asks `squeue` for the jobs' states,
 * `scontrol show job` for a failed job's details, and `scancel`s. Tracking,
 * polling, cancelling and settling are the base's; this file maps Slurm's
 * states and resources onto it. Files of a run go to
 * `CACHE/runs/<experiment>/<run>/slurm/` (see docs/cluster.md).
 *
 * @module
 */
import { join } from "node:path";
import type { ExecutorKind } from "../executor.ts";
import {
  type RemoteBackend,
  type RemoteExecutorDefinition,
  remoteExecutorKind,
  type RemoteInfo,
  type RemotePhase,
  type RemoteState,
  type RemoteSubmission,
  type RemoteSubmitted,
  SubmitError,
} from "./remote.ts";
import {
  commandSlurmClient,
  type QueueState,
  type SlurmClient,
} from "./slurm_client.ts";
import { batchScript } from "./slurm_script.ts";
import {
  checkSlurmBlock,
  SlurmExecutorSchema,
  type SlurmExecutorSpec,
} from "./slurm_spec.ts";

/** Terminal Slurm states. */
const _TERMINAL = new Set([
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "TIMEOUT",
  "NODE_FAIL",
  "PREEMPTED",
  "OUT_OF_MEMORY",
  "BOOT_FAIL",
  "DEADLINE",
  "SPECIAL_EXIT",
  "REVOKED",
]);

/** Pending reasons that never resolve by waiting. */
const _HOPELESS = new Set([
  "PartitionTimeLimit",
  "PartitionNodeLimit",
  "BadConstraints",
  "InvalidAccount",
  "InvalidQOS",
  "DependencyNeverSatisfied",
]);

/** Resolved resources of one node. */
export interface SlurmJobResources {
  /** `--partition`. */
  readonly partition?: string;
  /** `--cpus-per-task`. */
  readonly cpus?: number;
  /** `--mem`. */
  readonly mem?: string;
  /** `--time`. */
  readonly time?: string;
  /** `--gres`. */
  readonly gres?: string;
  /** Extra flags. */
  readonly sbatch: readonly string[];
}

/** The `--mem` value of a memory size as written (numbers are megabytes). */
function _mem(m: number | string | undefined): string | undefined {
  return m === undefined ? undefined : typeof m === "number" ? `${m}M` : m;
}

/** Resources of a node of `kind` from the executor block. */
export function resourcesOf(
  spec: SlurmExecutorSpec,
  kind: string,
): SlurmJobResources {
  const all = spec.resources ?? {};
  const k = spec.kinds?.[kind] ?? {};
  const partition = k.partition ?? all.partition ?? spec.partition;
  const cpus = k.cpus ?? all.cpus;
  const mem = _mem(k.mem ?? all.mem);
  const t = k.time ?? all.time;
  const time = t === undefined ? undefined : String(t);
  const gres = k.gres ?? all.gres;
  return {
    ...(partition !== undefined ? { partition } : {}),
    ...(cpus !== undefined ? { cpus } : {}),
    ...(mem !== undefined ? { mem } : {}),
    ...(time !== undefined ? { time } : {}),
    ...(gres !== undefined ? { gres } : {}),
    sbatch: [
      ...(spec.sbatch ?? []),
      ...(all.sbatch ?? []),
      ...(k.sbatch ?? []),
    ],
  };
}

/** sbatch arguments for resources (without name, output and array). */
export function sbatchArgs(
  spec: SlurmExecutorSpec,
  res: SlurmJobResources,
): string[] {
  const a: string[] = [];
  if (res.partition) a.push(`--partition=${res.partition}`);
  if (spec.account) a.push(`--account=${spec.account}`);
  if (spec.qos) a.push(`--qos=${spec.qos}`);
  if (res.cpus !== undefined) a.push(`--cpus-per-task=${res.cpus}`);
  if (res.mem !== undefined) a.push(`--mem=${res.mem}`);
  if (res.time !== undefined) a.push(`--time=${res.time}`);
  if (res.gres !== undefined) a.push(`--gres=${res.gres}`);
  a.push(...res.sbatch);
  return a;
}

/** Slurm's state of a job in the base's terms. */
export function slurmState(q: QueueState): RemoteState {
  const s = q.state;
  const phase: RemotePhase = s === "PENDING" || s.startsWith("REQUEUE")
    ? "queued"
    : s === "COMPLETED"
    ? "completed"
    : _TERMINAL.has(s)
    ? "failed"
    : "running";
  const reason = q.reason && q.reason !== "None" ? q.reason : undefined;
  return {
    phase,
    state: s,
    ...(reason ? { reason } : {}),
    ...(q.nodes ? { where: q.nodes } : {}),
    ...(s === "PENDING" && reason && _HOPELESS.has(reason)
      ? { hopeless: "fix the executor block (partition, time, account, qos)" }
      : {}),
    ...(s === "TIMEOUT" || s === "CANCELLED" ? { killed: true } : {}),
  };
}

/** The Slurm backend of one run (see the module documentation). */
export class SlurmBackend implements RemoteBackend<SlurmJobResources> {
  /** sbatch, squeue, scancel. */
  readonly commands = {
    submit: "sbatch",
    poll: "squeue",
    cancel: "scancel",
  } as const;
  /** Up to 1000 array tasks per submission, 1 with `array: false`. */
  readonly maxBatch: number;
  #spec: SlurmExecutorSpec;
  #client: SlurmClient;

  /** The backend of a block, with the real Slurm commands unless `client` replaces them. */
  constructor(spec: SlurmExecutorSpec, client?: SlurmClient) {
    this.#spec = spec;
    this.#client = client ?? commandSlurmClient();
    this.maxBatch = spec.array === false ? 1 : 1000;
  }

  /** Partition and account. */
  describe(): string {
    const s = this.#spec;
    return [
      s.partition ? `partition ${s.partition}` : "default partition",
      ...(s.account ? [`account ${s.account}`] : []),
    ].join(", ");
  }

  /** The block's resources of a kind. */
  resources(kind: string): SlurmJobResources {
    return resourcesOf(this.#spec, kind);
  }

  /** Writes the batch script and runs sbatch (an array for several tasks). */
  async submit(
    s: RemoteSubmission<SlurmJobResources>,
  ): Promise<readonly RemoteSubmitted[]> {
    const array = s.tasks.length > 1;
    const script = join(s.dir, `${s.stem}.sbatch`);
    try {
      Deno.writeTextFileSync(
        script,
        batchScript({
          deno: s.deno,
          args: s.args,
          cwd: s.cwd,
          tasks: s.tasks,
          title: s.title,
        }),
        { mode: 0o755 },
      );
    } catch (e) {
      throw new SubmitError(
        `cannot write the batch script ${script}: ${(e as Error).message}`,
      );
    }
    const id = await this.#client.submit(script, [
      `--job-name=${s.name}`,
      `--output=${join(s.dir, array ? `${s.stem}_%a.log` : `${s.stem}.log`)}`,
      `--chdir=${s.cwd}`,
      "--open-mode=append",
      ...(array ? [`--array=0-${s.tasks.length - 1}`] : []),
      ...sbatchArgs(this.#spec, s.resources),
    ]);
    return s.tasks.map((_, i) =>
      array
        ? { id: `${id}_${i}`, log: join(s.dir, `${s.stem}_${i}.log`) }
        : { id }
    );
  }

  /** squeue. */
  async poll(
    ids: readonly string[],
  ): Promise<ReadonlyMap<string, RemoteState> | null> {
    const q = await this.#client.queue(ids);
    if (q === null) return null;
    return new Map([...q].map(([id, s]) => [id, slurmState(s)]));
  }

  /** scontrol show job. */
  async inspect(id: string): Promise<RemoteInfo | null> {
    const info = await this.#client.show(id);
    if (!info) return null;
    return {
      ...slurmState(info),
      ...(info.exitCode ? { exit: info.exitCode } : {}),
      facts: [
        ...(info.runTime && info.runTime !== "?"
          ? [`ran ${info.runTime}`]
          : []),
        ...(info.timeLimit && info.timeLimit !== "?"
          ? [`time limit ${info.timeLimit}`]
          : []),
      ],
    };
  }

  /** scancel. */
  cancel(ids: readonly string[]): Promise<void> {
    return this.#client.cancel(ids);
  }
}

/** Options of {@linkcode slurmExecutorKind}. */
export interface SlurmExecutorKindOptions {
  /** The Slurm commands. @default the real ones (and they must be on PATH) */
  readonly client?: SlurmClient;
  /** How often status files and the cache are looked at (ms). @default 250 */
  readonly checkMs?: number;
}

/**
 * The `slurm` executor kind; options replace the Slurm commands (tests,
 * benchmarks).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { slurmExecutorKind } from "./slurm.ts";
 * const slurm = slurmExecutorKind();
 * assert.equal(slurm.name, "slurm");
 * assert.deepEqual(slurm.capabilities?.programs, ["sbatch", "squeue", "scontrol", "scancel"]);
 * assert.equal(v.safeParse(slurm.spec, { type: "slurm", partition: "cpu" }).success, true);
 * assert.equal(v.safeParse(slurm.spec, { type: "slurm", partitoin: "cpu" }).success, false);
 * ```
 */
export function slurmExecutorKind(
  options: SlurmExecutorKindOptions = {},
): ExecutorKind<SlurmExecutorSpec> {
  const def: RemoteExecutorDefinition<SlurmExecutorSpec, SlurmJobResources> = {
    name: "slurm",
    description:
      "one sbatch job per node (job arrays for nodes ready together) over a shared cache directory",
    spec: SlurmExecutorSchema,
    check: checkSlurmBlock,
    programs: options.client ? [] : ["sbatch", "squeue", "scontrol", "scancel"],
    programsFix:
      "run envsmith where the Slurm client commands are (e.g. a login node of the cluster), or choose another executor (--executor local)",
    module: import.meta.url,
    backend: ({ spec }) => new SlurmBackend(spec, options.client),
    ...(options.checkMs !== undefined ? { checkMs: options.checkMs } : {}),
  };
  return remoteExecutorKind(def);
}

/** The `slurm` executor kind with the real Slurm commands. */
export const slurm: ExecutorKind<SlurmExecutorSpec> = slurmExecutorKind();
