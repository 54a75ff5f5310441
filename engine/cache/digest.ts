/**
 * The digest of the code a node kind runs: its module graph (local static and
 * dynamic imports, `new URL("...", import.meta.url)` data files), plus the
 * exact versions of the npm packages it imports (from `deno.lock`). Editing
 * any file of the graph changes the digest, hence every key of that kind.
 *
 * @module
 */
import { dirname, join, relative, resolve } from "node:path";
import { fromFileUrl, toFileUrl } from "../paths.ts";
import { hashJson, sha256Hex } from "../canonical.ts";
import type { NodeKind } from "../types.ts";

/** The code digest of a module and what went into it. */
export interface CodeDigest {
  /** sha256 over `files` and `packages`. */
  readonly digest: string;
  /** Project-relative path -> sha256 of its content. */
  readonly files: Readonly<Record<string, string>>;
  /** Resolved non-local dependencies, e.g. `npm:yaml@2.9.1`. */
  readonly packages: readonly string[];
}

const _IMPORT_RE =
  /(?:^|[;\n}])\s*(import|export)\s+(type\s+)?(?:[\w*${}\s,]+?\s+from\s+)?["']([^"'\n]+)["']/g;
const _DYNAMIC_RE = /\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)/g;

/**
 * The module specifiers a source text names: static imports and re-exports
 * (`import type` / `export type` ones only with `types: true`) and dynamic
 * `import()` of a literal specifier. The one view of imports the code
 * digest takes (it leaves type-only imports out: they run nothing), and that
 * the project's architecture checks take (with them: a type import is
 * still a dependency between folders). A computed `import(x)` is not seen.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { importSpecifiers } from "./digest.ts";
 * const src = [
 *   'import { a } from "./a.ts";',
 *   'import type { T } from "./t.ts";',
 *   'export * from "./b.ts";',
 *   'const lib = await import("valibot");',
 * ].join("\n");
 * assert.deepEqual(importSpecifiers(src), ["./a.ts", "./b.ts", "valibot"]);
 * assert.deepEqual(importSpecifiers(src, { types: true }), [
 *   "./a.ts",
 *   "./t.ts",
 *   "./b.ts",
 *   "valibot",
 * ]);
 * ```
 */
export function importSpecifiers(
  text: string,
  options: { types?: boolean } = {},
): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(_IMPORT_RE)) {
    if (!m[2] || options.types) out.push(m[3]!);
  }
  for (const m of text.matchAll(_DYNAMIC_RE)) out.push(m[1]!);
  return out;
}
const _URL_RE =
  /new\s+URL\s*\(\s*["']([^"'\n]+)["']\s*,\s*import\.meta\.url\s*\)/g;

interface _Project {
  /** The workspace root (or the project's directory): paths are relative to it. */
  root: string;
  /** The import map that applies (a member's entries over the root's). */
  imports: Record<string, string>;
  /** `specifiers` of the root's deno.lock. */
  lock: Record<string, string>;
  /** Workspace packages: name -> version. */
  members: Map<string, string>;
}

interface _Config {
  imports?: Record<string, string>;
  workspace?: string[];
  name?: string;
  version?: string;
}

const _projects = new Map<string, _Project | null>();
let _generation = 0;

/** Counts {@linkcode clearDigestCache} calls: what was computed from digests before a clear is stale. */
export function digestGeneration(): number {
  return _generation;
}
const _digests = new Map<string, CodeDigest>();
const _byDigest = new Map<string, CodeDigest>();

function _readConfig(dir: string): _Config | null {
  try {
    return JSON.parse(Deno.readTextFileSync(join(dir, "deno.json"))) as _Config;
  } catch {
    return null;
  }
}

/** The nearest directory at or above `dir` with a deno.json. */
function _configDir(dir: string): string | null {
  for (let d = dir;; d = dirname(d)) {
    if (_readConfig(d)) return d;
    if (dirname(d) === d) return null;
  }
}

/** The workspace root above `dir` that lists `dir` as a member, if any. */
function _workspaceRoot(dir: string): string | null {
  for (let d = dirname(dir);; d = dirname(d)) {
    const cfg = _readConfig(d);
    if (cfg) {
      return cfg.workspace?.some((m) => resolve(d, m) === dir) ? d : null;
    }
    if (dirname(d) === d) return null;
  }
}

function _project(dir: string): _Project | null {
  if (_projects.has(dir)) return _projects.get(dir)!;
  let result: _Project | null = null;
  const own = _configDir(dir);
  if (own !== null) {
    const root = _workspaceRoot(own) ?? own;
    const rootCfg = _readConfig(root)!;
    const ownCfg = _readConfig(own)!;
    let lock: Record<string, string> = {};
    try {
      const l = JSON.parse(Deno.readTextFileSync(join(root, "deno.lock"))) as {
        specifiers?: Record<string, string>;
      };
      lock = l.specifiers ?? {};
    } catch { /* no lock: ranges are recorded as written */ }
    const members = new Map<string, string>();
    for (const m of rootCfg.workspace ?? []) {
      const cfg = _readConfig(join(root, m));
      if (cfg?.name) members.set(cfg.name, cfg.version ?? "0.0.0");
    }
    result = {
      root,
      imports: { ...rootCfg.imports, ...(own === root ? {} : ownCfg.imports) },
      lock,
      members,
    };
  }
  _projects.set(dir, result);
  return result;
}

function _resolvePackage(spec: string, project: _Project | null): string {
  let mapped = spec;
  if (project) {
    if (project.imports[spec]) mapped = project.imports[spec]!;
    else {
      for (const [k, target] of Object.entries(project.imports)) {
        if (k.endsWith("/") && spec.startsWith(k)) {
          mapped = target + spec.slice(k.length);
          break;
        }
      }
    }
    // A workspace package is recorded like a registry package: by its
    // name and version (the engine's own changes are versioned by KEY_FORMAT).
    for (const [name, version] of project.members) {
      if (mapped === name || mapped.startsWith(name + "/")) {
        return `${name}@${version}${mapped.slice(name.length)}`;
      }
    }
  }
  const m = /^(npm|jsr):(@?[^@/]+(?:\/[^@/]+)?)(?:@([^/]+))?/.exec(mapped);
  if (m && project) {
    const base = `${m[1]}:${m[2]}${m[3] ? "@" + m[3] : ""}`;
    const locked = project.lock[base];
    if (locked) return `${m[1]}:${m[2]}@${locked.split("_")[0]}`;
  }
  return mapped;
}

/** Raised when a module graph cannot be digested (not a local file, unreadable). */
export class DigestError extends TypeError {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "DigestError";
  }
}

function _addPath(
  path: string,
  root: string,
  files: Record<string, string>,
): void {
  const st = Deno.statSync(path);
  if (st.isDirectory) {
    const names = [...Deno.readDirSync(path)].map((e) => e.name).sort();
    for (const n of names) _addPath(join(path, n), root, files);
  } else {
    files[relative(root, path)] = sha256Hex(Deno.readFileSync(path));
  }
}

/**
 * Digests the module graph that starts at `moduleUrl` (a `file:` URL). Throws
 * {@linkcode DigestError} when that is impossible; callers then mark the node
 * as not cacheable. Results are memoised per URL for the life of the process.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toFileUrl } from "../paths.ts";
 * import { codeDigest } from "./digest.ts";
 * const dir = await Deno.makeTempDir();
 * Deno.writeTextFileSync(`${dir}/kind.ts`, 'import { f } from "./f.ts";\nexport const kind = f;\n');
 * Deno.writeTextFileSync(`${dir}/f.ts`, "export const f = 1;\n");
 * const d = codeDigest(toFileUrl(`${dir}/kind.ts`));
 * assert.deepEqual(Object.keys(d.files).sort(), ["f.ts", "kind.ts"]);
 * assert.match(d.digest, /^[0-9a-f]{64}$/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function codeDigest(moduleUrl: string): CodeDigest {
  const hit = _digests.get(moduleUrl);
  if (hit) return hit;
  if (!moduleUrl.startsWith("file:")) {
    throw new DigestError(
      `the module ${moduleUrl} is not a local file, so its code cannot be digested`,
    );
  }
  const startPath = fromFileUrl(moduleUrl);
  const project = _project(dirname(startPath));
  const root = project?.root ?? dirname(startPath);
  const files: Record<string, string> = {};
  const packages = new Set<string>();
  const seen = new Set<string>();
  const queue = [startPath];
  while (queue.length > 0) {
    const path = queue.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (e) {
      throw new DigestError(
        `cannot read ${path} (imported by the kind's module graph): ${
          (e as Error).message
        }`,
      );
    }
    files[relative(root, path)] = sha256Hex(text);
    if (!/\.(m?[jt]sx?)$/.test(path)) continue;
    const base = toFileUrl(path);
    for (const spec of importSpecifiers(text)) {
      if (
        spec.startsWith("./") || spec.startsWith("../") ||
        spec.startsWith("file:")
      ) {
        queue.push(fromFileUrl(new URL(spec, base).href));
      } else if (spec.startsWith("node:")) {
        continue;
      } else {
        packages.add(_resolvePackage(spec, project));
      }
    }
    for (const m of text.matchAll(_URL_RE)) {
      const spec = m[1]!;
      if (!(spec.startsWith("./") || spec.startsWith("../"))) continue;
      const p = fromFileUrl(new URL(spec, base).href);
      if (/\.(m?[jt]sx?)$/.test(p)) queue.push(p);
      else {
        try {
          _addPath(p, root, files);
        } catch {
          /* a data file that does not exist yet is not part of the code */
        }
      }
    }
  }
  const result = _digestOf(files, packages);
  _digests.set(moduleUrl, result);
  return result;
}

/** The digest of `files` (path -> content hash) and `packages`, both sorted. */
function _digestOf(
  files: Record<string, string>,
  packages: Iterable<string>,
): CodeDigest {
  const sortedFiles: Record<string, string> = {};
  for (const k of Object.keys(files).sort()) sortedFiles[k] = files[k]!;
  const pk = [...packages].sort();
  return {
    digest: hashJson({ files: sortedFiles, packages: pk }),
    files: sortedFiles,
    packages: pk,
  };
}

/** Forgets memoised digests (tests that edit code between plans). */
export function clearDigestCache(): void {
  _generation++;
  _digests.clear();
  _byDigest.clear();
  _projects.clear();
}

/**
 * The code digest of a set of modules: with one module exactly
 * {@linkcode codeDigest} (so kinds without `codeModules` keep their keys);
 * with more, the union of their graphs' files and packages, hashed the same
 * way. Memoised; {@linkcode codeFilesOf} finds the files by digest later.
 */
export function modulesDigest(moduleUrls: readonly string[]): CodeDigest {
  const urls = [...new Set(moduleUrls)];
  if (urls.length === 1) {
    const d = codeDigest(urls[0]!);
    _byDigest.set(d.digest, d);
    return d;
  }
  const memo = `\0${[...urls].sort().join("\0")}`;
  const hit = _digests.get(memo);
  if (hit) return hit;
  const files: Record<string, string> = {};
  const packages = new Set<string>();
  for (const url of urls) {
    const d = codeDigest(url);
    Object.assign(files, d.files);
    for (const p of d.packages) packages.add(p);
  }
  const result = _digestOf(files, packages);
  _digests.set(memo, result);
  _byDigest.set(result.digest, result);
  return result;
}

/** The modules whose code a node runs: its kind's module and what `codeModules` adds for its parameters. */
export function nodeModules(
  kind: NodeKind,
  literal: unknown,
  baseDir: string,
): string[] {
  return [kind.module, ...(kind.codeModules?.(literal, { baseDir }) ?? [])];
}

/**
 * The code digest of one node ({@linkcode nodeModules} digested together).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { toFileUrl } from "../paths.ts";
 * import { codeDigest, nodeCodeDigest } from "./digest.ts";
 * const dir = await Deno.makeTempDir();
 * Deno.writeTextFileSync(`${dir}/kind.ts`, "export const kind = 1;\n");
 * Deno.writeTextFileSync(`${dir}/fast.ts`, "export const fast = 2;\n");
 * const kind: NodeKind = {
 *   name: "pick", description: "runs the module its `how` names", params: v.unknown(),
 *   module: toFileUrl(`${dir}/kind.ts`),
 *   codeModules: (p) => [toFileUrl(`${dir}/${(p as { how: string }).how}.ts`)],
 *   run: () => Promise.resolve({ value: null }),
 * };
 * const d = nodeCodeDigest(kind, { how: "fast" }, dir);
 * assert.deepEqual(Object.keys(d.files).sort(), ["fast.ts", "kind.ts"]);
 * assert.notEqual(d.digest, codeDigest(kind.module).digest);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function nodeCodeDigest(
  kind: NodeKind,
  literal: unknown,
  baseDir: string,
): CodeDigest {
  return modulesDigest(nodeModules(kind, literal, baseDir));
}

/** The files of a code digest computed in this process, if any. */
export function codeFilesOf(
  digest: string,
): Readonly<Record<string, string>> | undefined {
  return _byDigest.get(digest)?.files;
}
