/**
 * An executor plugin for PBS Pro / OpenPBS, written as a user would write
 * one (docs/engine.md, "An executor"): a backend of the engine's remote
 * executor, which keeps the tracking, polling, cancelling and settling.
 * This file says only how to submit (`qsub`), poll (`qstat`) and cancel
 * (`qdel`).
 *
 * Use: load the module as a plugin and name it in the experiment,
 *
 *     executor: { type: pbs, queue: workq, resources: { ncpus: 2, mem: 4gb, walltime: "01:00:00" } }
 *
 * The cache directory must be on a file system the compute nodes share.
 *
 * @module
 */
import { join } from "node:path";
import * as v from "valibot";
import {
  type ExecutorKind,
  jobScript,
  type RemoteBackend,
  remoteExecutorKind,
  type RemoteExecutorSpec,
  remoteSpecEntries,
  type RemoteState,
  type RemoteSubmission,
  type RemoteSubmitted,
  runCommandLine,
  SubmitError,
} from "@envsmith/engine/executor";

/** Resources of every job (`qsub -l`). */
export interface PbsResources {
  /** `select=1:ncpus=N`. */
  readonly ncpus?: number | undefined;
  /** `select=1:mem=...`, e.g. `4gb`. */
  readonly mem?: string | undefined;
  /** `walltime=HH:MM:SS`. */
  readonly walltime?: string | undefined;
}

/** A parsed `executor: {type: pbs}` block. */
export interface PbsSpec extends RemoteExecutorSpec {
  /** `pbs`. */
  readonly type: "pbs";
  /** `qsub -q`. */
  readonly queue?: string | undefined;
  /** Directory of qsub, qstat and qdel when they are not on PATH. */
  readonly bin?: string | undefined;
  /** Resources of every job. */
  readonly resources?: PbsResources | undefined;
}

const PbsSchema = v.strictObject({
  type: v.literal("pbs"),
  ...remoteSpecEntries,
  queue: v.optional(v.pipe(v.string(), v.minLength(1))),
  bin: v.optional(v.pipe(v.string(), v.minLength(1))),
  resources: v.optional(v.strictObject({
    ncpus: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    mem: v.optional(v.pipe(v.string(), v.regex(/^\d+[kmgt]?b$/i))),
    walltime: v.optional(v.pipe(v.string(), v.regex(/^\d+:\d\d:\d\d$/))),
  })),
});

/** PBS job states (`job_state`) that have not ended. */
const _QUEUED = new Set(["Q", "H", "W", "T", "M"]);

/** A PBS command: by name on PATH, or in the block's `bin` directory. */
function _command(spec: PbsSpec, name: string): string {
  return spec.bin ? join(spec.bin, name) : name;
}

/** The PBS backend of one run. */
class PbsBackend implements RemoteBackend<PbsResources> {
  readonly commands = { submit: "qsub", poll: "qstat", cancel: "qdel" };
  readonly maxBatch = 1000; // a job array (-J 0-N)
  #spec: PbsSpec;
  constructor(spec: PbsSpec) {
    this.#spec = spec;
  }

  describe(): string {
    return this.#spec.queue ? `queue ${this.#spec.queue}` : "default queue";
  }

  resources(): PbsResources {
    return this.#spec.resources ?? {};
  }

  async submit(
    s: RemoteSubmission<PbsResources>,
  ): Promise<readonly RemoteSubmitted[]> {
    const array = s.tasks.length > 1;
    const script = join(s.dir, `${s.stem}.pbs`);
    try {
      Deno.writeTextFileSync(
        script,
        jobScript({
          ...s,
          scheduler: {
            label: "pbs",
            jobId: "PBS_JOBID",
            index: "PBS_ARRAY_INDEX",
          },
        }),
      );
    } catch (e) {
      throw new SubmitError(`cannot write ${script}: ${(e as Error).message}`);
    }
    const r = s.resources;
    const select = [
      ...(r.ncpus ? [`ncpus=${r.ncpus}`] : []),
      ...(r.mem ? [`mem=${r.mem}`] : []),
    ];
    const args = [
      "-N",
      s.name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 200),
      "-j",
      "oe",
      "-o",
      join(s.dir, array ? `${s.stem}_^array_index^.log` : `${s.stem}.log`),
      ...(array ? ["-J", `0-${s.tasks.length - 1}`] : []),
      ...(this.#spec.queue ? ["-q", this.#spec.queue] : []),
      ...(select.length ? ["-l", `select=1:${select.join(":")}`] : []),
      ...(r.walltime ? ["-l", `walltime=${r.walltime}`] : []),
      script,
    ];
    const out = await runCommandLine(_command(this.#spec, "qsub"), args);
    const id = out.stdout.trim();
    if (out.code !== 0 || !id) {
      throw new Error(out.stderr.trim() || `exit ${out.code}`);
    }
    // An array's id is "123[].server"; its task i is "123[i].server".
    return s.tasks.map((_, i) =>
      array
        ? {
          id: id.replace("[]", `[${i}]`),
          log: join(s.dir, `${s.stem}_${i}.log`),
        }
        : { id }
    );
  }

  async poll(
    ids: readonly string[],
  ): Promise<ReadonlyMap<string, RemoteState> | null> {
    // -x: finished jobs too; -t: array tasks one by one.
    const out = await runCommandLine(_command(this.#spec, "qstat"), [
      "-x",
      "-t",
      "-f",
      "-F",
      "json",
      ...ids,
    ]);
    if (out.code !== 0 && !out.stdout.trim()) {
      // Every id unknown: nothing to conclude but that they are gone.
      return /Unknown Job Id/i.test(out.stderr) ? new Map() : null;
    }
    let jobs: Record<
      string,
      {
        job_state?: string;
        Exit_status?: number;
        exec_host?: string;
        comment?: string;
      }
    >;
    try {
      jobs = JSON.parse(out.stdout).Jobs ?? {};
    } catch {
      return null;
    }
    const states = new Map<string, RemoteState>();
    for (const [id, j] of Object.entries(jobs)) {
      const state = j.job_state ?? "?";
      const exit = j.Exit_status;
      states.set(id, {
        phase: _QUEUED.has(state)
          ? "queued"
          : state === "F" || state === "X"
          ? (exit === 0 ? "completed" : "failed")
          : "running",
        state,
        ...(j.comment ? { reason: j.comment } : {}),
        ...(j.exec_host ? { where: j.exec_host.replace(/\/.*/, "") } : {}),
        // walltime exceeded (-29) or deleted (271 = 256 + SIGTERM)
        ...(exit === -29 || exit === 271 ? { killed: true } : {}),
      });
    }
    return states;
  }

  async cancel(ids: readonly string[]): Promise<void> {
    if (ids.length) {
      await runCommandLine(_command(this.#spec, "qdel"), [
        "-W",
        "force",
        ...ids,
      ]);
    }
  }
}

/** The `pbs` executor. */
export const pbs: ExecutorKind<PbsSpec> = remoteExecutorKind<
  PbsSpec,
  PbsResources
>({
  name: "pbs",
  description:
    "one qsub job per node (job arrays for nodes ready together) over a shared cache directory",
  spec: PbsSchema,
  programs: (spec) => ["qsub", "qstat", "qdel"].map((p) => _command(spec, p)),
  programsFix: "run envsmith on a login node of the PBS cluster",
  module: import.meta.url,
  backend: ({ spec }) => new PbsBackend(spec),
});

/** What the plugin loader reads. */
export const executors: readonly ExecutorKind<PbsSpec>[] = [pbs];
