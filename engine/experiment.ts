/**
 * Loading an experiment file: YAML with positions -> validated, unrolled
 * (`stages`), variant-expanded (`matrix`) static graph of nodes. Every error of
 * the file is collected in one pass and thrown together as an
 * {@linkcode ExperimentError} whose diagnostics carry file:line:col.
 *
 * @module
 */
import * as v from "valibot";
import { dirname, resolve } from "node:path";
import {
  type ExecutorSpec,
  ExperimentFileSchema,
  IdSchema,
  LocalExecutorSchema,
  MatrixSchema,
  PlainNodeSchema,
  SlurmExecutorSchema,
  SlurmResourcesSchema,
  StagesNodeSchema,
  TableSchema,
  type TableSpec,
} from "../schemas/experiment.ts";
import {
  type Diagnostic,
  type DiagnosticCode,
  ExperimentError,
  UserError,
} from "./errors.ts";
import { type DocPath, Source } from "./source.ts";
import { didYouMean } from "./suggest.ts";
import { columnPlains } from "./tables.ts";
import {
  type FieldPath,
  getField,
  InputRef,
  MatrixRef,
  NodeRef,
  parseReference,
  type Resolvable,
  SeedRef,
  type Template,
} from "./refs.ts";
import type { Json, NodeKind } from "./types.ts";

/** One value of a matrix axis. */
export interface AxisValue {
  /** The label used in node ids and tables (`name` of an object value). */
  readonly label: string;
  /** The value `$matrix.AXIS` gives. */
  readonly value: Json;
  /** Environment variables without which variants using this value are skipped. */
  readonly requiresEnv: readonly string[];
}

/** A matrix axis. */
export interface Axis {
  /** Axis name. */
  readonly name: string;
  /** Its values in file order. */
  readonly values: readonly AxisValue[];
}

/** A node of the expanded graph. */
export interface GraphNode {
  /** Position in {@linkcode Experiment.nodes} (a topological order). */
  readonly index: number;
  /** Expanded id, e.g. `score[context=full,seed=2]`. */
  readonly id: string;
  /** Id before matrix expansion, e.g. `curriculum.2.policy`. */
  readonly plain: string;
  /** Top-level node id in the file (`curriculum` for stage nodes). */
  readonly group: string;
  /** The kind that computes it. */
  readonly kind: NodeKind;
  /** Its matrix coordinates: axis -> label, only for the axes it depends on. */
  readonly variant: Readonly<Record<string, string>>;
  /** Indices of the nodes it reads. */
  readonly deps: readonly number[];
  /** Its parameters with matrix values and the seed substituted; node inputs remain as {@linkcode InputRef}. */
  readonly params: Resolvable;
  /** The parameters with node references as written and matrix/seed references substituted (what fingerprints see). */
  readonly literal: Json;
  /** Why it is skipped (e.g. `OPENAI_API_KEY not set`), when it is. */
  readonly skipped?: string;
}

/** A loaded, validated and expanded experiment. */
export interface Experiment {
  /** `experiment:` name. */
  readonly name: string;
  /** The file as given. */
  readonly file: string;
  /** Absolute directory of the file. */
  readonly dir: string;
  /** `seed:` */
  readonly seed: number;
  /** Matrix axes in file order. */
  readonly axes: readonly Axis[];
  /** Every variant (axis -> label) that is not excluded. */
  readonly variants: readonly Readonly<Record<string, string>>[];
  /** All nodes, in a topological order. */
  readonly nodes: readonly GraphNode[];
  /** Expanded id -> index. */
  readonly byId: ReadonlyMap<string, number>;
  /** Plain id -> the axes it depends on (matrix order). */
  readonly plainAxes: ReadonlyMap<string, readonly string[]>;
  /** Reference names (plain ids and stage aliases like `curriculum.policy`) -> plain id. */
  readonly names: ReadonlyMap<string, string>;
  /** `tables:` entries. */
  readonly tables: readonly TableSpec[];
  /** `executor:` when given. */
  readonly executor?: ExecutorSpec;
}

/** Options of {@linkcode loadExperiment}. */
export interface LoadOptions {
  /** The node kinds the file may use. */
  readonly kinds: Iterable<NodeKind>;
  /**
   * Reads environment variables (only to decide `requires_env` skips; values are never stored).
   * @default Deno.env.get
   */
  readonly env?: (name: string) => string | undefined;
}

const _RESERVED = new Set([
  "matrix",
  "seed",
  "prev",
  "earlier",
  "stage",
  "stages",
]);

/** Reads, validates and expands an experiment file. */
export async function loadExperiment(
  file: string,
  options: LoadOptions,
): Promise<Experiment> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    throw new UserError(
      `Cannot read experiment file ${file}: ${(e as Error).message}`,
    );
  }
  return compileExperiment(file, text, options);
}

/** Validates and expands an experiment given as text (`file` names it in messages). */
export function compileExperiment(
  file: string,
  text: string,
  options: LoadOptions,
): Experiment {
  const source = new Source(file, text);
  return new _Compiler(source, options).compile();
}

interface _Plain {
  id: string;
  group: string;
  kindName: string;
  rawWith: Record<string, unknown>;
  /** Document path of the node's mapping. */
  at: DocPath;
  stage?: {
    index: number;
    count: number;
    each: ReadonlySet<string>;
    from: Record<string, unknown>;
    fromAt: DocPath;
  };
  template: Template;
  deps: Set<string>;
  axes: string[];
  hasMatrix: boolean;
}

/** sbatch flags envsmith sets itself ("") or that have their own field. */
const _SBATCH_FIELDS: Record<string, string> = {
  array: "",
  a: "",
  output: "",
  o: "",
  error: "",
  e: "",
  "job-name": "",
  J: "",
  parsable: "",
  wrap: "",
  chdir: "",
  D: "",
  "open-mode": "",
  partition: "partition",
  p: "partition",
  account: "account",
  A: "account",
  qos: "qos",
  q: "qos",
  "cpus-per-task": "cpus",
  c: "cpus",
  mem: "mem",
  time: "time",
  t: "time",
};

function _isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function _objectKeys(schema: unknown): string[] | null {
  const s = schema as { type?: string; entries?: Record<string, unknown> };
  if (s && (s.type === "object" || s.type === "strict_object") && s.entries) {
    return Object.keys(s.entries);
  }
  return null;
}

class _Compiler {
  #src: Source;
  #kinds = new Map<string, NodeKind>();
  #env: (name: string) => string | undefined;
  #diags: Diagnostic[] = [];
  #seen = new Set<string>();
  #axes: { name: string; values: AxisValue[] }[] = [];
  #names = new Map<string, string>();
  #plains = new Map<string, _Plain>();

  constructor(src: Source, options: LoadOptions) {
    this.#src = src;
    for (const k of options.kinds) this.#kinds.set(k.name, k);
    this.#env = options.env ?? ((n) => Deno.env.get(n));
  }

  #report(
    code: DiagnosticCode,
    path: DocPath,
    message: string,
    key = false,
  ): void {
    const d = this.#src.diag(code, path, message, key);
    const id = `${d.code}|${d.path}|${d.message}`;
    if (this.#seen.has(id)) return;
    this.#seen.add(id);
    this.#diags.push(d);
  }

  #unknownKeys(
    obj: Record<string, unknown>,
    known: readonly string[],
    at: DocPath,
    what: string,
    code: DiagnosticCode = "structure",
  ): void {
    for (const k of Object.keys(obj)) {
      if (!known.includes(k)) {
        this.#report(
          code,
          [...at, k],
          `unknown ${what} "${k}"${didYouMean(k, known)} (valid: ${
            known.join(", ")
          })`,
          true,
        );
      }
    }
  }

  #issues(
    issues: readonly v.BaseIssue<unknown>[],
    at: DocPath,
    code: DiagnosticCode,
    skip?: (p: DocPath) => boolean,
  ): void {
    for (const issue of issues) {
      if (issue.type === "strict_object" && issue.expected === "never") {
        continue; // reported by #unknownKeys
      }
      const sub: (string | number)[] = (issue.path ?? []).map((p) =>
        p.key as string | number
      );
      if (skip && skip(sub)) continue;
      const where = [...at, ...sub];
      const msg = issue.issues && issue.type === "union"
        ? issue.issues.map((i) => i.message).filter((m, i, a) =>
          a.indexOf(m) === i
        ).join("; or ")
        : issue.message;
      this.#report(
        code,
        where,
        `${sub.length ? sub.join(".") + ": " : ""}${msg}`,
      );
    }
  }

  compile(): Experiment {
    const data = this.#src.data;
    if (!_isRecord(data)) {
      this.#report(
        "structure",
        [],
        "an experiment file is a mapping with experiment, seed and nodes",
      );
      throw new ExperimentError(this.#diags);
    }
    const topKeys = Object.keys(ExperimentFileSchema.entries);
    this.#unknownKeys(data, topKeys, [], "top-level key");
    const top = v.safeParse(ExperimentFileSchema, data);
    if (!top.success) {
      this.#issues(
        top.issues,
        [],
        "structure",
        (p) => p[0] === "executor",
      );
    }
    const executor = this.#executor(data.executor);
    this.#matrix(data.matrix);
    const nodes = _isRecord(data.nodes) ? data.nodes : {};
    this.#collect(nodes);
    for (const p of this.#plains.values()) this.#template(p);
    for (const p of this.#plains.values()) this.#checkParams(p);
    const order = this.#order();
    let graph: {
      nodes: GraphNode[];
      byId: Map<string, number>;
      variants: Record<string, string>[];
    } = {
      nodes: [],
      byId: new Map(),
      variants: [],
    };
    if (order) {
      this.#axesOf(order);
      graph = this.#expand(
        order,
        typeof data.seed === "number" ? data.seed : 0,
      );
    }
    const tables = this.#tables(data.tables);
    if (this.#diags.length > 0) throw new ExperimentError(this.#diags);
    return {
      name: String(data.experiment),
      file: this.#src.file,
      dir: dirname(resolve(this.#src.file)),
      seed: Number(data.seed),
      axes: this.#axes,
      variants: graph.variants,
      nodes: graph.nodes,
      byId: graph.byId,
      plainAxes: new Map([...this.#plains.values()].map((p) => [p.id, p.axes])),
      names: this.#names,
      tables,
      ...(executor ? { executor } : {}),
    };
  }

  // ---- executor -----------------------------------------------------------

  #executor(raw: unknown): ExecutorSpec | undefined {
    if (raw === undefined) return undefined;
    const at = ["executor"];
    if (!_isRecord(raw)) {
      this.#report(
        "executor",
        at,
        "executor is a mapping with a type: local or slurm",
      );
      return undefined;
    }
    const types = ["local", "slurm"];
    if (raw.type === undefined || !types.includes(String(raw.type))) {
      this.#report(
        "executor",
        raw.type === undefined ? at : [...at, "type"],
        raw.type === undefined
          ? "executor needs a type: local or slurm"
          : `unknown executor type "${String(raw.type)}"${
            didYouMean(String(raw.type), types)
          } (valid: local, slurm)`,
      );
      return undefined;
    }
    const schema = raw.type === "slurm"
      ? SlurmExecutorSchema
      : LocalExecutorSchema;
    this.#unknownKeys(
      raw,
      Object.keys(schema.entries),
      at,
      `key of the ${raw.type} executor`,
      "executor",
    );
    const resourceKeys = Object.keys(SlurmResourcesSchema.entries);
    const checkResources = (r: unknown, where: DocPath) => {
      if (!_isRecord(r)) return;
      this.#unknownKeys(r, resourceKeys, where, "resource", "executor");
      this.#sbatchFlags(r.sbatch, [...where, "sbatch"]);
    };
    if (raw.type === "slurm") {
      checkResources(raw.resources, [...at, "resources"]);
      this.#sbatchFlags(raw.sbatch, [...at, "sbatch"]);
      if (_isRecord(raw.kinds)) {
        const known = [...this.#kinds.keys()];
        for (const [k, r] of Object.entries(raw.kinds)) {
          if (!this.#kinds.has(k)) {
            this.#report(
              "executor",
              [...at, "kinds", k],
              `unknown kind "${k}" in executor.kinds${didYouMean(k, known)}`,
              true,
            );
          }
          checkResources(r, [...at, "kinds", k]);
        }
      }
    }
    const r = v.safeParse(schema, raw);
    if (!r.success) {
      this.#issues(r.issues, at, "executor");
      return undefined;
    }
    return r.output;
  }

  #sbatchFlags(raw: unknown, at: DocPath): void {
    if (!Array.isArray(raw)) return;
    raw.forEach((f, i) => {
      if (typeof f !== "string") return;
      const m = /^(?:--([A-Za-z][A-Za-z0-9-]*)|-([A-Za-z]))/.exec(f);
      if (!m) return; // the schema reports it
      const name = m[1] ?? m[2]!;
      const own = _SBATCH_FIELDS[name];
      if (own !== undefined) {
        this.#report(
          "executor",
          [...at, i],
          own === ""
            ? `sbatch flag "${f}" is set by envsmith itself (job names, logs, arrays and working directory are managed per node); remove it`
            : `sbatch flag "${f}": use the executor's "${own}:" field instead`,
        );
      }
    });
  }

  // ---- matrix -------------------------------------------------------------

  #matrix(raw: unknown): void {
    if (raw === undefined) return;
    if (!_isRecord(raw)) {
      this.#report(
        "matrix",
        ["matrix"],
        "matrix is a mapping of axis names to lists of values",
      );
      return;
    }
    const r = v.safeParse(MatrixSchema, raw);
    if (!r.success) this.#issues(r.issues, ["matrix"], "matrix");
    for (const [name, values] of Object.entries(raw)) {
      if (name === "exclude") continue;
      if (!v.is(IdSchema, name)) {
        this.#report(
          "matrix",
          ["matrix", name],
          `axis name "${name}" must be letters, digits, _ or - and start with a letter or _`,
          true,
        );
      }
      if (!Array.isArray(values)) continue;
      const out: AxisValue[] = [];
      const labels = new Set<string>();
      values.forEach((val, i) => {
        let label: string;
        let requiresEnv: string[] = [];
        if (_isRecord(val)) {
          if (val.name === undefined) return;
          label = String(val.name);
          if (Array.isArray(val.requires_env)) {
            requiresEnv = val.requires_env.map(String);
          }
        } else label = String(val);
        if (labels.has(label)) {
          this.#report(
            "matrix",
            ["matrix", name, i],
            `duplicate value "${label}" in axis ${name}`,
          );
        }
        labels.add(label);
        out.push({ label, value: val as Json, requiresEnv });
      });
      this.#axes.push({ name, values: out });
    }
  }

  #variants(): Record<string, string>[] {
    let variants: Record<string, string>[] = [{}];
    for (const axis of this.#axes) {
      const next: Record<string, string>[] = [];
      for (const base of variants) {
        for (const val of axis.values) {
          next.push({ ...base, [axis.name]: val.label });
        }
      }
      variants = next;
    }
    const raw = (this.#src.data as Record<string, unknown>).matrix;
    const excludes = _isRecord(raw) && Array.isArray(raw.exclude)
      ? raw.exclude
      : [];
    const rules: Record<string, string>[] = [];
    excludes.forEach((ex, i) => {
      if (!_isRecord(ex)) return;
      const rule: Record<string, string> = {};
      for (const [axisName, val] of Object.entries(ex)) {
        const axis = this.#axes.find((a) => a.name === axisName);
        if (!axis) {
          this.#report(
            "matrix",
            ["matrix", "exclude", i, axisName],
            `exclude names unknown axis "${axisName}"${
              didYouMean(axisName, this.#axes.map((a) => a.name))
            }`,
            true,
          );
          continue;
        }
        const label = _isRecord(val) ? String(val.name) : String(val);
        if (!axis.values.some((x) => x.label === label)) {
          this.#report(
            "matrix",
            ["matrix", "exclude", i, axisName],
            `axis ${axisName} has no value "${label}"${
              didYouMean(label, axis.values.map((x) => x.label))
            }`,
          );
        }
        rule[axisName] = label;
      }
      rules.push(rule);
    });
    return variants.filter((vt) =>
      !rules.some((rule) => Object.entries(rule).every(([a, l]) => vt[a] === l))
    );
  }

  // ---- nodes and stages ---------------------------------------------------

  #collect(nodes: Record<string, unknown>): void {
    for (const [id, raw] of Object.entries(nodes)) {
      const at = ["nodes", id];
      if (!v.is(IdSchema, id) || _RESERVED.has(id)) {
        this.#report(
          "structure",
          at,
          _RESERVED.has(id)
            ? `"${id}" is reserved for references ($${id}); choose another node id`
            : `node id "${id}" must be letters, digits, _ or - and start with a letter or _`,
          true,
        );
        continue;
      }
      if (!_isRecord(raw) || typeof raw.kind !== "string") {
        this.#report("structure", at, `node ${id} needs a "kind"`);
        continue;
      }
      if (raw.kind === "stages") {
        this.#unknownKeys(
          raw,
          Object.keys(StagesNodeSchema.entries),
          at,
          `key of a stages node`,
        );
        const r = v.safeParse(StagesNodeSchema, raw);
        if (!r.success) {
          this.#issues(r.issues, at, "stages");
          if (typeof raw.count !== "number" || !_isRecord(raw.each)) continue;
        }
        const count = Math.max(1, Math.floor(Number(raw.count)));
        const each = raw.each as Record<string, unknown>;
        const from = _isRecord(raw.from) ? raw.from : {};
        const eachNames = new Set(Object.keys(each));
        for (const name of eachNames) {
          const eat = [...at, "each", name];
          const node = each[name];
          if (!v.is(IdSchema, name) || _RESERVED.has(name)) {
            this.#report(
              "stages",
              eat,
              `stage node name "${name}" must be an id (letters, digits, _ or -) and not one of ${
                [..._RESERVED].join(", ")
              }`,
              true,
            );
            continue;
          }
          if (!_isRecord(node) || typeof node.kind !== "string") {
            this.#report("stages", eat, `stage node ${name} needs a "kind"`);
            continue;
          }
          if (node.kind === "stages") {
            this.#report("stages", [...eat, "kind"], "stages cannot be nested");
            continue;
          }
          this.#unknownKeys(
            node,
            Object.keys(PlainNodeSchema.entries),
            eat,
            "key of a node",
          );
          const rn = v.safeParse(PlainNodeSchema, node);
          if (!rn.success) this.#issues(rn.issues, eat, "structure");
          for (let i = 0; i < count; i++) {
            const pid = `${id}.${i}.${name}`;
            this.#names.set(pid, pid);
            this.#plains.set(pid, {
              id: pid,
              group: id,
              kindName: node.kind,
              rawWith: _isRecord(node.with) ? node.with : {},
              at: eat,
              stage: {
                index: i,
                count,
                each: eachNames,
                from,
                fromAt: [...at, "from"],
              },
              template: null,
              deps: new Set(),
              axes: [],
              hasMatrix: false,
            });
          }
          this.#names.set(`${id}.${name}`, `${id}.${count - 1}.${name}`);
        }
        for (const k of Object.keys(from)) {
          if (!eachNames.has(k)) {
            this.#report(
              "stages",
              [...at, "from", k],
              `from.${k} does not name a node of each${
                didYouMean(k, eachNames)
              }`,
              true,
            );
          }
        }
      } else {
        this.#unknownKeys(
          raw,
          Object.keys(PlainNodeSchema.entries),
          at,
          "key of a node",
        );
        const r = v.safeParse(PlainNodeSchema, raw);
        if (!r.success) this.#issues(r.issues, at, "structure");
        this.#names.set(id, id);
        this.#plains.set(id, {
          id,
          group: id,
          kindName: raw.kind,
          rawWith: _isRecord(raw.with) ? raw.with : {},
          at,
          template: null,
          deps: new Set(),
          axes: [],
          hasMatrix: false,
        });
      }
    }
  }

  // ---- references ---------------------------------------------------------

  #template(p: _Plain): void {
    p.template = this.#walk(p.rawWith, [...p.at, "with"], p) as Template;
  }

  #walk(x: unknown, at: DocPath, p: _Plain, global = false): Template {
    if (typeof x === "string") {
      return x.startsWith("$") ? this.#ref(x, at, p, global) : x;
    }
    if (Array.isArray(x)) {
      return x.map((y, i) => this.#walk(y, [...at, i], p, global));
    }
    if (_isRecord(x)) {
      const out: { [k: string]: Template } = {};
      for (const [k, y] of Object.entries(x)) {
        out[k] = this.#walk(y, [...at, k], p, global);
      }
      return out;
    }
    return x as Json;
  }

  /** Resolves one reference string; `global` ignores the stage scope (for `from:` values). */
  #ref(s: string, at: DocPath, p: _Plain, global: boolean): Template {
    if (s.startsWith("$$")) return s.slice(1);
    const parsed = parseReference(s);
    if ("error" in parsed) {
      this.#report("reference", at, parsed.error);
      return _BROKEN;
    }
    const segs = parsed.segments;
    const head = segs[0]!;
    const stage = global ? undefined : p.stage;
    if (head === "seed") {
      if (segs.length > 1) {
        this.#report("reference", at, `"${s}": $seed has no fields`);
      }
      p.hasMatrix = true;
      return new SeedRef(s);
    }
    if (head === "matrix") {
      const axisName = segs[1];
      const axis = this.#axes.find((a) => a.name === axisName);
      if (!axis) {
        this.#report(
          "reference",
          at,
          axisName === undefined
            ? `"${s}" needs an axis: $matrix.AXIS`
            : `Cannot resolve "${s}": no matrix axis named "${axisName}"${
              didYouMean(axisName, this.#axes.map((a) => a.name))
            }`,
        );
        return _BROKEN;
      }
      p.hasMatrix = true;
      return new MatrixRef(axis.name, segs.slice(2), s, at);
    }
    if (stage && head === "stage") {
      if (segs.length > 1) {
        this.#report(
          "reference",
          at,
          `"${s}": $stage is an integer and has no fields`,
        );
      }
      return stage.index;
    }
    if (stage && (head === "prev" || head === "earlier")) {
      const name = segs[1];
      if (name === undefined || !stage.each.has(name)) {
        this.#report(
          "reference",
          at,
          `Cannot resolve "${s}": $${head} needs a node of this stage's each: ` +
            `${
              name === undefined
                ? "none given"
                : `"${name}" is not one${didYouMean(name, stage.each)}`
            }`,
        );
        return _BROKEN;
      }
      const rest = segs.slice(2);
      if (head === "earlier") {
        const out: Template[] = [];
        for (let j = 0; j < stage.index; j++) {
          out.push(this.#nodeRef(`${p.group}.${j}.${name}`, rest, s, p));
        }
        return out;
      }
      if (stage.index > 0) {
        return this.#nodeRef(
          `${p.group}.${stage.index - 1}.${name}`,
          rest,
          s,
          p,
        );
      }
      if (!Object.hasOwn(stage.from, name)) {
        this.#report(
          "reference",
          at,
          `Cannot resolve "${s}" at stage 0: add from.${name} to the stages node (the value stage 0 reads as $prev.${name})`,
        );
        return _BROKEN;
      }
      const init = stage.from[name];
      if (
        typeof init === "string" && init.startsWith("$") &&
        !init.startsWith("$$")
      ) {
        const t = this.#ref(init, [...stage.fromAt, name], p, true);
        if (rest.length === 0) return t;
        if (t instanceof NodeRef) {
          return new NodeRef(t.node, [...t.path, ...rest], s);
        }
        if (t instanceof MatrixRef) {
          return new MatrixRef(t.axis, [...t.path, ...rest], s, t.at);
        }
        this.#report(
          "reference",
          at,
          `"${s}": from.${name} has no field ${rest.join(".")}`,
        );
        return _BROKEN;
      }
      const lit = this.#walk(init, [...stage.fromAt, name], p, true);
      if (rest.length === 0) return lit;
      const got = getField(lit as Json, rest);
      if (got === undefined) {
        this.#report(
          "reference",
          at,
          `Cannot resolve "${s}" at stage 0: from.${name} has no field ${
            rest.join(".")
          }`,
        );
        return _BROKEN;
      }
      return got;
    }
    if (stage && stage.each.has(head)) {
      return this.#nodeRef(
        `${p.group}.${stage.index}.${head}`,
        segs.slice(1),
        s,
        p,
      );
    }
    for (let k = segs.length; k >= 1; k--) {
      const name = k === 1 ? head : segs.slice(0, k).join(".");
      const plain = this.#names.get(name);
      if (plain !== undefined) return this.#nodeRef(plain, segs.slice(k), s, p);
    }
    const candidates = [...this.#names.keys()].filter((n) =>
      !/\.\d+\./.test(n)
    );
    if (stage) {
      candidates.push(
        ...stage.each,
        ...[...stage.each].map((n) => `prev.${n}`),
        "stage",
      );
    }
    candidates.push(...this.#axes.map((a) => `matrix.${a.name}`), "seed");
    const guess = segs.length > 1 ? segs.slice(0, 2).join(".") : head;
    const m1 = didYouMean(head, candidates);
    this.#report(
      "reference",
      at,
      `Cannot resolve "${s}": no node named "${head}"${
        m1 || didYouMean(guess, candidates)
      }`,
    );
    return _BROKEN;
  }

  #nodeRef(plain: string, path: FieldPath, raw: string, p: _Plain): NodeRef {
    p.deps.add(plain);
    return new NodeRef(plain, path, raw);
  }

  // ---- kinds and parameters -----------------------------------------------

  #checkParams(p: _Plain): void {
    const kind = this.#kinds.get(p.kindName);
    if (!kind) {
      this.#report(
        "unknown-kind",
        [...p.at, "kind"],
        `unknown kind "${p.kindName}"${
          didYouMean(p.kindName, [...this.#kinds.keys(), "stages"])
        }`,
      );
      return;
    }
    const keys = _objectKeys(kind.params);
    if (keys) {
      this.#unknownKeys(
        p.rawWith,
        keys,
        [...p.at, "with"],
        `parameter of kind ${kind.name}`,
        "unknown-param",
      );
    }
    const holes: DocPath[] = [];
    const probe = _probe(p.template, [], holes);
    this.#validate(kind, probe, holes, [...p.at, "with"], "");
  }

  #validate(
    kind: NodeKind,
    probe: unknown,
    holes: DocPath[],
    at: DocPath,
    suffix: string,
  ): void {
    const r = v.safeParse(kind.params, probe);
    if (r.success) return;
    const skip = (path: DocPath) =>
      holes.some((h) => {
        const n = Math.min(h.length, path.length);
        for (let i = 0; i < n; i++) {
          if (String(h[i]) !== String(path[i])) return false;
        }
        return true;
      });
    const issues = r.issues.filter((i) =>
      !(i.type === "object" && i.expected === "never") &&
      !(i.type === "strict_object" && i.expected === "never")
    );
    const before = this.#diags.length;
    this.#issues(issues, at, "invalid-param", skip);
    if (suffix) {
      for (let i = before; i < this.#diags.length; i++) {
        const d = this.#diags[i]!;
        this.#diags[i] = { ...d, message: d.message + suffix };
      }
    }
  }

  // ---- order, axes, expansion ---------------------------------------------

  #order(): _Plain[] | null {
    const indeg = new Map<string, number>();
    const users = new Map<string, string[]>();
    for (const p of this.#plains.values()) {
      indeg.set(p.id, 0);
      users.set(p.id, []);
    }
    for (const p of this.#plains.values()) {
      for (const d of p.deps) {
        if (!this.#plains.has(d)) continue;
        indeg.set(p.id, indeg.get(p.id)! + 1);
        users.get(d)!.push(p.id);
      }
    }
    const queue = [...indeg].filter(([, n]) => n === 0).map(([id]) => id);
    const order: _Plain[] = [];
    for (let i = 0; i < queue.length; i++) {
      const id = queue[i]!;
      order.push(this.#plains.get(id)!);
      for (const u of users.get(id)!) {
        const n = indeg.get(u)! - 1;
        indeg.set(u, n);
        if (n === 0) queue.push(u);
      }
    }
    if (order.length === this.#plains.size) return order;
    // Report each cycle once, as a path.
    const left = new Set([...indeg].filter(([, n]) => n > 0).map(([id]) => id));
    const reported = new Set<string>();
    for (const start of left) {
      if (reported.has(start)) continue;
      const stack: string[] = [];
      const onStack = new Map<string, number>();
      let cur: string | undefined = start;
      while (cur !== undefined && !onStack.has(cur)) {
        onStack.set(cur, stack.length);
        stack.push(cur);
        cur = [...this.#plains.get(cur)!.deps].find((d) => left.has(d));
      }
      if (cur === undefined) continue;
      const cycle = stack.slice(onStack.get(cur)!);
      if (cycle.some((c) => reported.has(c))) continue;
      for (const c of cycle) reported.add(c);
      const p = this.#plains.get(cycle[0]!)!;
      this.#report(
        "cycle",
        [...p.at, "with"],
        `cycle: ${
          [...cycle, cycle[0]].join(" -> ")
        } (a node cannot depend on itself)`,
      );
    }
    return null;
  }

  #axesOf(order: _Plain[]): void {
    const axisOrder = this.#axes.map((a) => a.name);
    const hasSeedAxis = axisOrder.includes("seed");
    for (const p of order) {
      const set = new Set<string>();
      if (p.hasMatrix) _directAxes(p.template, set, hasSeedAxis);
      for (const d of p.deps) {
        for (const a of this.#plains.get(d)?.axes ?? []) set.add(a);
      }
      p.axes = axisOrder.filter((a) => set.has(a));
    }
  }

  #expand(
    order: _Plain[],
    baseSeed: number,
  ): {
    nodes: GraphNode[];
    byId: Map<string, number>;
    variants: Record<string, string>[];
  } {
    const variants = this.#variants();
    const nodes: GraphNode[] = [];
    const byId = new Map<string, number>();
    const instances = new Map<string, Map<string, number>>(); // plain -> projection key -> index
    const axisByName = new Map(this.#axes.map((a) => [a.name, a]));
    for (const p of order) {
      const kind = this.#kinds.get(p.kindName);
      const mine = new Map<string, number>();
      instances.set(p.id, mine);
      const projections = new Map<string, Record<string, string>>();
      for (const vt of variants) {
        const proj: Record<string, string> = {};
        for (const a of p.axes) proj[a] = vt[a]!;
        const k = p.axes.map((a) => proj[a]).join("\u0000");
        if (!projections.has(k)) projections.set(k, proj);
      }
      for (const [pk, proj] of projections) {
        const id = p.axes.length === 0
          ? p.id
          : `${p.id}[${p.axes.map((a) => `${a}=${proj[a]}`).join(",")}]`;
        const deps = new Set<number>();
        let skipped: string | undefined;
        for (const a of p.axes) {
          const val = axisByName.get(a)!.values.find((x) =>
            x.label === proj[a]
          )!;
          const missing = val.requiresEnv.find((n) => !this.#env(n));
          if (missing && !skipped) skipped = `${missing} not set`;
        }
        const subst = (t: Template): Resolvable => {
          if (t instanceof NodeRef) {
            const dp = this.#plains.get(t.node)!;
            const dk = dp.axes.map((a) => proj[a]).join("\u0000");
            const idx = instances.get(t.node)!.get(dk)!;
            deps.add(idx);
            return new InputRef(idx, t.path);
          }
          if (t instanceof SeedRef) {
            const ax = axisByName.get("seed");
            return ax
              ? ax.values.find((x) => x.label === proj.seed)!.value
              : baseSeed;
          }
          if (t instanceof MatrixRef) {
            const val = axisByName.get(t.axis)!.values.find((x) =>
              x.label === proj[t.axis]
            )!.value;
            const got = getField(val, t.path);
            if (got === undefined) {
              this.#report(
                "reference",
                t.at,
                `Cannot resolve "${t.raw}": the value "${
                  proj[t.axis]
                }" of axis ${t.axis} has no field ${t.path.join(".")}`,
              );
              return null;
            }
            return got;
          }
          if (t === null || typeof t !== "object") return t;
          if (t instanceof _Broken) return null;
          if (Array.isArray(t)) return t.map(subst);
          const out: { [k: string]: Resolvable } = {};
          for (const [k, x] of Object.entries(t)) out[k] = subst(x);
          return out;
        };
        const params = subst(p.template);
        for (const d of deps) {
          const s = nodes[d]!.skipped;
          if (s && !skipped) skipped = s;
        }
        if (kind && p.hasMatrix) {
          const holes: DocPath[] = [];
          const probe = _probe(params as Template, [], holes);
          this.#validate(
            kind,
            probe,
            holes,
            [...p.at, "with"],
            p.axes.length ? ` (in ${id})` : "",
          );
        }
        const index = nodes.length;
        nodes.push({
          index,
          id,
          plain: p.id,
          group: p.group,
          kind: kind ?? _MISSING,
          variant: proj,
          deps: [...deps],
          params,
          literal: _literal(p.template, params),
          ...(skipped ? { skipped } : {}),
        });
        byId.set(id, index);
        mine.set(pk, index);
      }
    }
    return { nodes, byId, variants };
  }

  // ---- tables ---------------------------------------------------------------

  #tables(raw: unknown): TableSpec[] {
    if (!Array.isArray(raw)) return [];
    const out: TableSpec[] = [];
    const names = new Set<string>();
    raw.forEach((t, i) => {
      const at = ["tables", i];
      if (!_isRecord(t)) {
        this.#report(
          "table",
          at,
          "a table is a mapping with name, node, rows and columns",
        );
        return;
      }
      this.#unknownKeys(
        t,
        Object.keys(TableSchema.entries),
        at,
        "key of a table",
        "table",
      );
      const r = v.safeParse(TableSchema, t);
      if (!r.success) {
        this.#issues(r.issues, at, "table");
        return;
      }
      const spec = r.output;
      const errorsBefore = this.#diags.length;
      if (names.has(spec.name)) {
        this.#report(
          "table",
          [...at, "name"],
          `duplicate table name "${spec.name}"`,
        );
      }
      names.add(spec.name);
      const plain = this.#names.get(spec.node);
      if (plain === undefined) {
        this.#report(
          "table",
          [...at, "node"],
          `table ${spec.name}: no node named "${spec.node}"${
            didYouMean(
              spec.node,
              [...this.#names.keys()].filter((n) => !/\.\d+\./.test(n)),
            )
          }`,
        );
        return;
      }
      const axes = this.#plains.get(plain)?.axes ?? [];
      const allAxes = this.#axes.map((a) => a.name);
      const checkAxis = (field: "rows" | "over", name: string | undefined) => {
        if (name === undefined) return;
        if (!allAxes.includes(name)) {
          this.#report(
            "table",
            [...at, field],
            `table ${spec.name}: ${field} names unknown axis "${name}"${
              didYouMean(name, allAxes)
            }`,
          );
        } else if (!axes.includes(name)) {
          this.#report(
            "table",
            [...at, field],
            `table ${spec.name}: node ${spec.node} does not vary with axis ${name} (it varies with: ${
              axes.join(", ") || "nothing"
            })`,
          );
        }
      };
      checkAxis("rows", spec.rows);
      checkAxis("over", spec.over);
      if (
        typeof spec.columns === "string" && !spec.columns.includes(".") &&
        spec.columns !== "value" && spec.columns !== "report"
      ) {
        if (!allAxes.includes(spec.columns)) {
          this.#report(
            "table",
            [...at, "columns"],
            `table ${spec.name}: columns is neither an axis nor a field path (value.… or report.…): "${spec.columns}"${
              didYouMean(spec.columns, allAxes)
            }`,
          );
        } else if (!axes.includes(spec.columns)) {
          this.#report(
            "table",
            [...at, "columns"],
            `table ${spec.name}: node ${spec.node} does not vary with axis ${spec.columns}`,
          );
        }
      } else {
        if (Array.isArray(spec.columns)) {
          spec.columns.forEach((c, j) => {
            if (typeof c === "string" || c.node === undefined) return;
            const where = [...at, "columns", j, "node"];
            const plains = columnPlains(
              this.#plains.keys(),
              this.#names,
              c.node,
            );
            if (plains.length === 0) {
              this.#report(
                "table",
                where,
                `table ${spec.name}: column ${c.label} reads node "${c.node}", which does not exist (write a node id, or a stage node with * for its stage, e.g. curriculum.*.config)${
                  didYouMean(
                    c.node,
                    [...this.#names.keys()].filter((n) => !/\.\d+\./.test(n)),
                  )
                }`,
              );
              return;
            }
            const own = new Set(axes);
            const extra = (this.#plains.get(plains[0]!)?.axes ?? []).filter((
              a,
            ) => !own.has(a));
            if (extra.length > 0) {
              this.#report(
                "table",
                where,
                `table ${spec.name}: column ${c.label} reads ${c.node}, which varies with ${
                  extra.join(", ")
                } and ${spec.node} does not, so a row has several values`,
              );
            }
          });
        }
        const paths = typeof spec.columns === "string"
          ? [spec.columns]
          : spec.columns.map((c) => typeof c === "string" ? c : c.path);
        paths.forEach((path, j) => {
          if (
            !/^(value|report)(\.[A-Za-z0-9_*-]+)*$/.test(path) ||
            (path.split("*").length > 2)
          ) {
            this.#report(
              "table",
              typeof spec.columns === "string"
                ? [...at, "columns"]
                : [...at, "columns", j],
              `table ${spec.name}: "${path}" is not a field path: value.a.b or report.a.b, with at most one * for "every key"`,
            );
          }
        });
      }
      if (
        spec.value !== undefined &&
        !/^(value|report)(\.[A-Za-z0-9_-]+)*$/.test(spec.value)
      ) {
        this.#report(
          "table",
          [...at, "value"],
          `table ${spec.name}: value "${spec.value}" is not a field path like value.success`,
        );
      }
      for (const [a, val] of Object.entries(spec.where ?? {})) {
        const axis = this.#axes.find((x) => x.name === a);
        if (!axis) {
          this.#report(
            "table",
            [...at, "where", a],
            `table ${spec.name}: where names unknown axis "${a}"${
              didYouMean(a, allAxes)
            }`,
            true,
          );
        } else if (!axis.values.some((x) => x.label === String(val))) {
          this.#report(
            "table",
            [...at, "where", a],
            `table ${spec.name}: axis ${a} has no value "${val}"${
              didYouMean(String(val), axis.values.map((x) => x.label))
            }`,
          );
        }
      }
      const used = new Set([
        spec.rows,
        spec.over,
        typeof spec.columns === "string" ? spec.columns : "",
        ...Object.keys(spec.where ?? {}),
      ]);
      const free = axes.filter((a) => !used.has(a));
      if (free.length > 0 && this.#diags.length === errorsBefore) {
        this.#report(
          "table",
          at,
          `table ${spec.name}: node ${spec.node} also varies with ${
            free.join(", ")
          }; fix ${free.length === 1 ? "it" : "them"} with where: { ${
            free.map((a) => `${a}: …`).join(", ")
          } } or aggregate with over: ${free[0]}`,
        );
      }
      out.push(spec);
    });
    return out;
  }
}

/** Stands for a reference that could not be resolved (already reported): a hole, never a value. */
class _Broken {}
const _BROKEN = new _Broken() as unknown as Template;

const _MISSING: NodeKind = {
  name: "(unknown)",
  description: "",
  params: v.unknown(),
  module: "",
  run() {
    return Promise.reject(new Error("unknown kind"));
  },
};

function _directAxes(
  t: Template,
  out: Set<string>,
  hasSeedAxis: boolean,
): void {
  if (t instanceof MatrixRef) out.add(t.axis);
  else if (t instanceof SeedRef) {
    if (hasSeedAxis) out.add("seed");
  } else if (t instanceof NodeRef || t === null || typeof t !== "object") {
    return;
  } else if (Array.isArray(t)) {
    for (const x of t) _directAxes(x, out, hasSeedAxis);
  } else for (const x of Object.values(t)) _directAxes(x, out, hasSeedAxis);
}

/** The template with every reference replaced by a placeholder string; `holes` collects their paths. */
function _probe(
  t: Template | Resolvable,
  at: (string | number)[],
  holes: DocPath[],
): unknown {
  if (
    t instanceof NodeRef || t instanceof MatrixRef || t instanceof SeedRef ||
    t instanceof InputRef || t instanceof _Broken
  ) {
    holes.push([...at]);
    return "$ref";
  }
  if (t === null || typeof t !== "object") return t;
  if (Array.isArray(t)) return t.map((x, i) => _probe(x, [...at, i], holes));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(t)) out[k] = _probe(x, [...at, k], holes);
  return out;
}

/**
 * The parameters as the kind's fingerprint sees them: node references as
 * written (their values are not known before running), matrix and seed
 * references replaced by this variant's values.
 */
function _literal(t: Template, resolved: Resolvable): Json {
  if (t instanceof NodeRef) return t.raw;
  if (t instanceof MatrixRef || t instanceof SeedRef) return resolved as Json;
  if (t instanceof _Broken) return null;
  if (t === null || typeof t !== "object") return t;
  const r = resolved as Record<string, Resolvable> & Resolvable[];
  if (Array.isArray(t)) return t.map((x, i) => _literal(x, r[i]!));
  const out: { [k: string]: Json } = {};
  for (const [k, x] of Object.entries(t)) out[k] = _literal(x, r[k]!);
  return out;
}
