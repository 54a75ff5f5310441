/**
 * Job specs: what `run-node KEY` reads to rebuild a job in another process
 * (`CACHE/jobs/KEY.json`, written before a cacheable job runs), so any
 * process that shares the cache directory can run one node by its key.
 *
 * @module
 */
import { hashJson } from "../canonical.ts";
import { modulesDigest } from "../cache/digest.ts";
import { readRegularText } from "../regular_file.ts";
import { UserError } from "../errors.ts";
import { writeAtomic } from "../cache/atomic_write.ts";
import type { Job } from "./job.ts";
import type { KeyComponents } from "../cache/keys.ts";
import { getField } from "../refs.ts";
import type { Store } from "../cache/store.ts";
import type { Json, NodeKind } from "../types.ts";
import { filePathOf, type FileReference } from "./file_input.ts";

/** What `run-node KEY` reads. */
export interface JobSpec {
  /** Format. */
  readonly format: 1;
  /** Key. */
  readonly key: string;
  /** A node id with this key. */
  readonly id: string;
  /** Experiment file (absolute). */
  readonly file: string;
  /** Kind name. */
  readonly kind: string;
  /** Directory of the experiment file. */
  readonly baseDir: string;
  /** Key components (parameters with inputs as `{$ref: {key, path}}`). */
  readonly components: KeyComponents;
  /** Input key -> node id. */
  readonly inputs: Readonly<Record<string, string>>;
  /** Modules besides the kind's whose code the node runs (`NodeKind.codeModules`). */
  readonly codeModules?: readonly string[];
}

/** Writes the job spec of a cacheable job (idempotent). */
export function writeJobSpec(
  store: Store,
  job: Pick<
    Job,
    "id" | "key" | "kind" | "components" | "inputs" | "baseDir" | "codeModules"
  >,
  file: string,
): string {
  const path = store.jobPath(job.key);
  const spec: JobSpec = {
    format: 1,
    key: job.key,
    id: job.id,
    file,
    kind: job.kind.name,
    baseDir: job.baseDir,
    components: job.components,
    inputs: job.inputs,
    ...(job.codeModules?.length ? { codeModules: job.codeModules } : {}),
  };
  const tmp = store.tmpPath(`job-${job.key.slice(0, 16)}`);
  writeAtomic(path, tmp, JSON.stringify(spec), "write the job spec");
  return path;
}

/**
 * Rebuilds a job from its spec: inputs are read (verified) from the store.
 *
 * @throws {UserError} when there is no spec, the kind is not registered or
 * its code changed since the spec was written, or an input is not cached.
 */
export function jobFromSpec(
  store: Store,
  key: string,
  kinds: ReadonlyMap<string, NodeKind>,
): Job {
  const spec = _readSpec(store, key);
  // The spec must be the one of this key: its own key, and the key the
  // hash of its components (a spec copied or edited under another name
  // would run another node and store it under this key).
  let componentsKey: string | null = null;
  try {
    componentsKey = hashJson(spec.components);
  } catch { /* not hashable */ }
  if (spec.key !== key || componentsKey !== key) {
    throw new UserError(
      `The job spec ${store.jobPath(key)} is not the spec of key ${key} (${
        spec.key !== key
          ? `it holds key ${String(spec.key).slice(0, 64)}`
          : "its key is not the hash of its components"
      }); remove it and rerun plan/run, or use run-node FILE NODE_ID`,
    );
  }
  const kind = kinds.get(spec.kind);
  if (!kind) {
    throw new UserError(
      `Job ${key} needs kind ${spec.kind}, which is not registered`,
    );
  }
  const modules = [kind.module, ...(spec.codeModules ?? [])];
  if (modulesDigest(modules).digest !== spec.components.code) {
    throw new UserError(
      `The code of kind ${spec.kind} changed since job ${key} was planned; rerun plan/run, or use run-node FILE NODE_ID`,
    );
  }
  const files: FileReference[] = [];
  return {
    id: spec.id,
    key: spec.key,
    cacheable: true,
    kind,
    params: _decode(spec, store, spec.components.params, files),
    components: spec.components,
    inputs: spec.inputs,
    baseDir: spec.baseDir,
    ...(spec.codeModules?.length ? { codeModules: spec.codeModules } : {}),
    ...(files.length ? { files } : {}),
  };
}

function _readSpec(store: Store, key: string): JobSpec {
  try {
    const spec = JSON.parse(
      readRegularText(store.jobPath(key), 256 * 1024 * 1024),
    ) as JobSpec;
    if (typeof spec !== "object" || spec === null || !spec.components) {
      throw new TypeError("not a job spec");
    }
    return spec;
  } catch {
    throw new UserError(
      `No job spec for key ${key} in ${store.root}/jobs: a node is addressed by key only after a run or plan wrote its spec; use run-node FILE NODE_ID`,
    );
  }
}

/** Key-component parameters back to values: `{$ref}` read from the store, `$$`-escaped keys unescaped. */
function _decode(
  spec: JobSpec,
  store: Store,
  t: Json,
  files: FileReference[],
): Json {
  if (t === null || typeof t !== "object") return t;
  if (Array.isArray(t)) return t.map((x) => _decode(spec, store, x, files));
  const ref = t.$ref as { key: string; path: string[] } | undefined;
  if (ref && Object.keys(t).length === 1) {
    const entry = store.loadVerified(ref.key);
    const name = spec.inputs[ref.key] ?? ref.key;
    if (!entry) {
      throw new UserError(
        `Input ${name} of ${spec.id} is not in the cache (key ${ref.key})`,
      );
    }
    const got = getField(entry.value, ref.path);
    if (got === undefined) {
      throw new UserError(`Input ${name} has no field ${ref.path.join(".")}`);
    }
    if ((t.$ref as { file?: unknown }).file === true) {
      return filePathOf(got, name, ref.path[0]!, store, files);
    }
    return got;
  }
  const out: { [k: string]: Json } = {};
  for (const [k, x] of Object.entries(t)) {
    out[k.startsWith("$$") ? k.slice(1) : k] = _decode(spec, store, x, files);
  }
  return out;
}
