/**
 * What an experiment's nodes' keys are computed from besides the cache:
 * the file's text, its overrides, the program's source tree, and the
 * environment variables read while it was compiled and keyed. Recorded once
 * beside the shipped tables, so that a fresh clone whose inputs are the same
 * can take the recorded keys instead of compiling the file again (compiling
 * and keying the shipped experiments is most of `tables`' time there).
 *
 * The record covers the experiment file, the program's source tree
 * (digested; its `node_modules` is pinned by the lock file the digest
 * includes), every other file the compile read through `Deno` (by digest,
 * or as absent) and every environment variable it read (digests of their
 * values, never the values). A file that loads plugins, or a compile that
 * read a directory outside the source or the whole environment, is not
 * recorded: it is simply compiled every time.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join, relative, resolve } from "node:path";
import { sha256Hex } from "../canonical.ts";

/** What one experiment file's keys were computed from. */
export interface KeyInputs {
  /** sha256 of the experiment file's text. */
  readonly text: string;
  /** The `--set` overrides and `--limit`s it was loaded with (JSON). */
  readonly options: string;
  /** {@linkcode sourceTreeDigest} of the program. */
  readonly tree: string;
  /** Every environment variable read, to the sha256 of its value (null: unset). */
  readonly env: Record<string, string | null>;
  /**
   * Every other file read outside the digested source, to the sha256 of its
   * bytes (null: it did not exist). A file in an ancestor of the program
   * root (a `deno.json` looked for above the project) by its path relative
   * to the root, so a clone elsewhere checks its own ancestors; any other
   * by its absolute path.
   */
  readonly files: Record<string, string | null>;
}

/** Directories left out of the source tree (results, caches, documentation, benchmarks). */
const SKIPPED_DIRS = new Set([
  ".git",
  "node_modules",
  ".envsmith",
  "results",
  "docs",
  "bench",
]);

/** Whether `rel` (a path in the program root, `/`-separated) is part of its digested source. */
function _inTree(rel: string): boolean {
  const parts = rel.split("/");
  if (parts.some((p) => SKIPPED_DIRS.has(p) || p === "..")) return false;
  const name = parts.at(-1)!;
  if (parts.length === 1 && name.endsWith(".md")) return false; // README and such
  return !/_test\.ts$|\.ya?ml$/.test(name);
}

const _trees = new Map<string, string>();

/**
 * The sha256 of every file of the program's source under `root` (path and
 * bytes), leaving out tests, Markdown, YAML and the directories of
 * {@linkcode SKIPPED_DIRS}; computed once per process and root.
 */
export function sourceTreeDigest(root: string): string {
  const known = _trees.get(root);
  if (known !== undefined) return known;
  const files: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory) {
        if (!SKIPPED_DIRS.has(e.name)) walk(join(dir, e.name), r);
      } else if (e.isFile && _inTree(r)) files.push(r);
    }
  };
  walk(root, "");
  files.sort();
  const h = createHash("sha256");
  for (const f of files) {
    h.update(f + "\0");
    h.update(Deno.readFileSync(join(root, f)));
    h.update("\0");
  }
  const digest = h.digest("hex");
  _trees.set(root, digest);
  return digest;
}

/** The Deno file functions a compile could read through (paths as their first argument). */
const _FILE_FUNCTIONS = [
  "readFileSync",
  "readTextFileSync",
  "readFile",
  "readTextFile",
  "statSync",
  "stat",
  "lstatSync",
  "lstat",
  "openSync",
  "open",
  "readDirSync",
  "readDir",
  "realPathSync",
  "realPath",
] as const;

/**
 * Runs `compile` (loading and keying `file`) while noting every environment
 * variable and file it reads through `Deno`; returns its value and the
 * inputs, or null inputs when it read what the record cannot cover (a
 * directory outside the digested source, or the whole environment).
 */
export async function recordKeyInputs<T>(
  root: string,
  file: string,
  options: string,
  compile: () => Promise<T>,
): Promise<{ value: T; inputs: KeyInputs | null }> {
  const env: Record<string, string | null> = {};
  const files = new Set<string>();
  let uncovered: string | undefined; // what the record cannot cover
  const self = resolve(file);
  const note = (path: unknown) => {
    const p = path instanceof URL
      ? decodeURIComponent(path.pathname)
      : String(path);
    const abs = resolve(p);
    if (abs === self) return;
    const rel = relative(root, abs).replaceAll("\\", "/");
    if (rel.split("/")[0] === "node_modules" || _inTree(rel)) return;
    // a file in an ancestor (a deno.json looked for above the project) by
    // its relative path, so that a clone elsewhere checks its own ancestors
    files.add(/^(\.\.\/)+[^/]+$/.test(rel) ? rel : abs);
  };
  const denoEnv = Deno.env as unknown as Record<string, unknown>;
  const envGet = Deno.env.get,
    envHas = Deno.env.has,
    envAll = Deno.env.toObject;
  const deno = Deno as unknown as Record<string, unknown>;
  const saved = _FILE_FUNCTIONS.map((n) => [n, deno[n]] as const);
  denoEnv.get = (name: string) => {
    const v = envGet.call(Deno.env, name);
    env[name] = v === undefined ? null : sha256Hex(v);
    return v;
  };
  denoEnv.has = (name: string) => {
    const v = envGet.call(Deno.env, name);
    env[name] = v === undefined ? null : sha256Hex(v);
    return v !== undefined;
  };
  denoEnv.toObject = () => {
    uncovered ??= "the whole environment";
    return envAll.call(Deno.env);
  };
  for (const [n, f] of saved) {
    deno[n] = (...args: unknown[]) => {
      note(args[0]);
      return (f as (...a: unknown[]) => unknown).apply(Deno, args);
    };
  }
  let value: T;
  try {
    value = await compile();
  } finally {
    denoEnv.get = envGet;
    denoEnv.has = envHas;
    denoEnv.toObject = envAll;
    for (const [n, f] of saved) deno[n] = f;
  }
  if (uncovered !== undefined) return { value, inputs: null };
  const states: Record<string, string | null> = {};
  let text: string;
  try {
    text = sha256Hex(Deno.readTextFileSync(file));
    for (const rel of [...files].sort()) {
      const state = _fileState(resolve(root, rel));
      if (state === undefined) return { value, inputs: null };
      states[rel] = state;
    }
  } catch {
    return { value, inputs: null };
  }
  return {
    value,
    inputs: { text, options, tree: sourceTreeDigest(root), env, files: states },
  };
}

/** A file's sha256, null when nothing is there, undefined when it is not a plain file (a directory). */
function _fileState(path: string): string | null | undefined {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
  return info.isFile ? sha256Hex(Deno.readFileSync(path)) : undefined;
}

/** Whether `file` here and now has the recorded inputs (same text, options, source tree and environment). */
export function keyInputsHold(
  inputs: KeyInputs,
  root: string,
  file: string,
  options: string,
): boolean {
  if (inputs.options !== options) return false;
  try {
    if (sha256Hex(Deno.readTextFileSync(file)) !== inputs.text) return false;
    for (const [name, digest] of Object.entries(inputs.env)) {
      const v = Deno.env.get(name);
      if ((v === undefined ? null : sha256Hex(v)) !== digest) return false;
    }
    for (const [rel, state] of Object.entries(inputs.files)) {
      if (_fileState(resolve(root, rel)) !== state) return false;
    }
    return sourceTreeDigest(root) === inputs.tree;
  } catch {
    return false;
  }
}
