/**
 * Plugin modules: a user's own TypeScript modules that register node kinds,
 * executors and whatever else the project registers (engineers, in
 * envsmith), named by `plugins: [./my_plugin.ts]` in an experiment file
 * (relative to it) or `--plugins MODULE` on the command line (relative to
 * the working directory; `--kinds MODULE` is the same mechanism).
 *
 * A plugin module may export:
 * - `kinds` (an array) or `kind`: node kinds, registered beside the
 *   built-in ones;
 * - `executors`: executor kinds, registered beside `local` and `slurm`;
 * - any export a {@linkcode PluginHandler} is given for (the project wires
 *   these up: `cli.ts` hands `engineers` to its engineer registry).
 *
 * The engine imports each module and hands its named exports to the
 * registries; it knows nothing of what a project's exports mean. Every
 * problem (a module that does not exist or does not load, a module that
 * exports nothing to register, a name already taken, a handler's refusal)
 * is a {@linkcode UserError} naming the module and the fix, reported at
 * `plan` before anything runs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadPlugins } from "./plugins.ts";
 * const none = await loadPlugins([], { from: "--plugins", baseDir: ".", kinds: [], executors: [] });
 * assert.deepEqual(none.kinds, []);
 * await assert.rejects(
 *   () => loadPlugins(["./no_such_plugin.ts"], { from: "--plugins", baseDir: ".", kinds: [], executors: [] }),
 *   /--plugins \.\/no_such_plugin\.ts: the module does not exist/,
 * );
 * ```
 *
 * @module
 */
import { isAbsolute, relative, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { UserError } from "../errors.ts";
import type { ExecutorDeclaration } from "./executor_block.ts";
import { fromFileUrl, toFileUrl } from "../paths.ts";
import type { NodeKind } from "../types.ts";
import { PLUGIN_LOAD_MS, probePluginImport } from "./plugin_probe.ts";

/**
 * Registers one named export of a plugin module (e.g. `engineers`) and
 * returns the names it registered (shown by `plan`). Throwing refuses the
 * module: the message is prefixed with where the module was named.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadPlugins } from "./plugins.ts";
 * const dir = await Deno.makeTempDir();
 * Deno.writeTextFileSync(`${dir}/mine.ts`, 'export const engineers = ["crowd"];\n');
 * const names: string[] = [];
 * const set = await loadPlugins(["./mine.ts"], {
 *   from: "--plugins", baseDir: dir, kinds: [], executors: [],
 *   handlers: { engineers: (value) => { names.push(...(value as string[])); return value as string[]; } },
 * });
 * assert.deepEqual(names, ["crowd"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export type PluginHandler = (value: unknown, module: string) => string[];

/** Options of {@linkcode loadPlugins}. */
export interface LoadPluginsOptions {
  /** Where the modules were named, for messages: `--plugins`, or `exp.yaml: plugins`. */
  readonly from: string;
  /** Directory relative module paths resolve against. */
  readonly baseDir: string;
  /** Node kinds already registered (a plugin may not take their names). */
  readonly kinds: readonly NodeKind[];
  /** Executors already registered. */
  readonly executors: readonly ExecutorDeclaration[];
  /** Named exports the project registers, by export name. */
  readonly handlers?: Readonly<Record<string, PluginHandler>>;
  /** How long a module may take to load (checked in a worker first). @default PLUGIN_LOAD_MS (30 s) */
  readonly loadTimeoutMs?: number;
}

/**
 * What one module registered.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadPlugins } from "./plugins.ts";
 * const dir = await Deno.makeTempDir();
 * Deno.writeTextFileSync(`${dir}/mine.ts`, 'export const engineers = ["crowd"];\n');
 * const names: string[] = [];
 * const set = await loadPlugins(["./mine.ts"], {
 *   from: "--plugins", baseDir: dir, kinds: [], executors: [],
 *   handlers: { engineers: (value) => { names.push(...(value as string[])); return value as string[]; } },
 * });
 * const [mod] = set.modules;
 * assert.equal(mod?.module, "./mine.ts");
 * assert.deepEqual(mod?.registered, { engineers: ["crowd"] });
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface LoadedPlugin {
  /** The module as written. */
  readonly module: string;
  /** Its URL. */
  readonly url: string;
  /** Names registered, by export (`kinds`, `executors`, `engineers`, ...). */
  readonly registered: Readonly<Record<string, readonly string[]>>;
}

/** What {@linkcode loadPlugins} registered. */
export interface PluginSet {
  /** Node kinds the modules export. */
  readonly kinds: readonly NodeKind[];
  /** Executors the modules export. */
  readonly executors: readonly ExecutorDeclaration[];
  /** Per module, in order. */
  readonly modules: readonly LoadedPlugin[];
}

/** Built-in names a kind may not take. */
const _RESERVED_KINDS = ["stages"];

/** The URL of a module named in `from` (a path relative to `baseDir`, or a URL). */
export function pluginUrl(module: string, baseDir: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(module) || module.startsWith("file:")) {
    return module;
  }
  return toFileUrl(isAbsolute(module) ? module : resolve(baseDir, module));
}

function _isSchema(x: unknown): boolean {
  return typeof x === "object" && x !== null &&
    (x as { kind?: unknown }).kind === "schema";
}

/**
 * Imports each module and registers what it exports (see the module doc).
 * Modules already loaded (the same URL) register nothing twice.
 *
 * @throws {UserError} naming the module: it does not exist, does not load,
 * exports nothing to register, or registers a name already taken.
 *
 * Long by design: one loop over the modules; each kind of export is checked inline so every error names its module in one place.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadPlugins } from "./plugins.ts";
 * const dir = await Deno.makeTempDir();
 * Deno.writeTextFileSync(`${dir}/mine.ts`, 'export const engineers = ["crowd"];\n');
 * const names: string[] = [];
 * const set = await loadPlugins(["./mine.ts"], {
 *   from: "--plugins", baseDir: dir, kinds: [], executors: [],
 *   handlers: { engineers: (value) => { names.push(...(value as string[])); return value as string[]; } },
 * });
 * assert.deepEqual(set.kinds, []);
 * await assert.rejects(
 *   loadPlugins(["./missing.ts"], { from: "--plugins", baseDir: dir, kinds: [], executors: [] }),
 *   /missing\.ts/,
 * );
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadPlugins(
  modules: readonly string[],
  options: LoadPluginsOptions,
): Promise<PluginSet> {
  const kinds: NodeKind[] = [];
  const executors: ExecutorDeclaration[] = [];
  const loaded: LoadedPlugin[] = [];
  const kindOwner = new Map<string, string>(
    options.kinds.map((k) => [k.name, k.module]),
  );
  const executorOwner = new Map<string, string>(
    options.executors.map((e) => [e.name, "envsmith (built in)"]),
  );
  const seen = new Set<string>();
  for (const m of modules) {
    const url = pluginUrl(m, options.baseDir);
    if (seen.has(url)) continue;
    seen.add(url);
    const at = `${options.from} ${m}`;
    if (url.startsWith("file:")) {
      try {
        Deno.statSync(fromFileUrl(url));
      } catch {
        throw new UserError(
          `${at}: the module does not exist (${
            relative(Deno.cwd(), fromFileUrl(url)) || fromFileUrl(url)
          }); correct the path (relative to ${
            options.from.startsWith("--")
              ? "the working directory"
              : "the experiment file"
          })`,
        );
      }
    }
    const probe = await probePluginImport(
      url,
      options.loadTimeoutMs ?? PLUGIN_LOAD_MS,
    );
    if (!probe.ok && "timedOut" in probe) {
      throw new UserError(
        `${at}: the module did not finish loading within ${
          (options.loadTimeoutMs ?? PLUGIN_LOAD_MS) / 1000
        } s (a loop or an endless wait at its top level?); fix the module: registering kinds must not wait for anything`,
      );
    }
    let mod: Record<string, unknown>;
    try {
      if (!probe.ok) throw new Error(probe.message);
      mod = await import(url);
    } catch (e) {
      throw new UserError(
        `${at}: the module does not load: ${
          String((e as Error)?.message ?? e).split("\n")[0]
        }; fix the module (deno check ${m} shows its errors)`,
      );
    }
    const registered: Record<string, string[]> = {};
    const list = mod.kinds ?? (mod.kind ? [mod.kind] : undefined);
    if (list !== undefined) {
      if (!Array.isArray(list)) {
        throw new UserError(`${at}: "kinds" must be an array of node kinds`);
      }
      for (const k of list as NodeKind[]) {
        if (
          typeof k?.name !== "string" || !_isSchema(k.params) ||
          typeof k.run !== "function" || typeof k.module !== "string"
        ) {
          throw new UserError(
            `${at}: a node kind needs name, description, params (a valibot schema), module (import.meta.url) and run`,
          );
        }
        const prev = kindOwner.get(k.name);
        if (_RESERVED_KINDS.includes(k.name)) {
          throw new UserError(
            `${at}: a node kind cannot be named "${k.name}" (built in); rename it`,
          );
        }
        if (prev !== undefined && prev !== k.module) {
          throw new UserError(
            `${at}: node kind "${k.name}" is already registered (by ${prev}); rename one`,
          );
        }
        if (prev === undefined) {
          kindOwner.set(k.name, k.module);
          kinds.push(k);
        }
        (registered.kinds ??= []).push(k.name);
      }
    }
    if (mod.executors !== undefined) {
      if (!Array.isArray(mod.executors)) {
        throw new UserError(
          `${at}: "executors" must be an array of executor kinds`,
        );
      }
      for (const e of mod.executors as ExecutorDeclaration[]) {
        if (
          typeof e?.name !== "string" || !_isSchema(e.spec) ||
          typeof (e as { create?: unknown }).create !== "function"
        ) {
          throw new UserError(
            `${at}: an executor needs name, description, spec (a valibot strict object whose type is the name) and create`,
          );
        }
        const prev = executorOwner.get(e.name);
        if (prev !== undefined && prev !== url) {
          throw new UserError(
            `${at}: executor "${e.name}" is already registered (by ${prev}); rename one`,
          );
        }
        if (prev === undefined) {
          executorOwner.set(e.name, url);
          executors.push(e);
        }
        (registered.executors ??= []).push(e.name);
      }
    }
    for (const [name, handle] of Object.entries(options.handlers ?? {})) {
      if (mod[name] === undefined) continue;
      try {
        registered[name] = handle(mod[name], m);
      } catch (e) {
        throw new UserError(`${at}: ${(e as Error)?.message ?? e}`);
      }
    }
    if (Object.keys(registered).length === 0) {
      const names = [
        "kinds",
        "executors",
        ...Object.keys(options.handlers ?? {}),
      ];
      throw new UserError(
        `${at}: the module exports nothing to register; export ${
          names.map((n) => `"${n}"`).join(", ")
        } (arrays)`,
      );
    }
    loaded.push({ module: m, url, registered });
  }
  return { kinds, executors, modules: loaded };
}

/**
 * The `plugins:` list of an experiment file, read before the file is
 * compiled (its kinds and engineers must be registered first). A file that
 * does not parse, or whose `plugins` is not a list of strings, gives `[]`:
 * compiling it reports the problem with its position.
 */
export function declaredPlugins(text: string): string[] {
  if (!/^plugins\s*:/m.test(text)) return [];
  let data: unknown;
  try {
    data = parseYaml(text, { maxAliasCount: 100 });
  } catch {
    return [];
  }
  const list = (data as { plugins?: unknown } | null)?.plugins;
  return Array.isArray(list) && list.every((x) => typeof x === "string")
    ? list
    : [];
}

/**
 * Load node kinds from modules (`--kinds MODULE`, `$ENVSMITH_KINDS`): each
 * module exports `kinds` (an array) or `kind`.
 *
 * @throws {UserError} naming the module when it cannot be imported or exports
 * no kinds.
 */
export async function loadKindModules(
  modules: readonly string[],
): Promise<NodeKind[]> {
  const set = await loadPlugins(modules, {
    from: "--kinds",
    baseDir: Deno.cwd(),
    kinds: [],
    executors: [],
  });
  return [...set.kinds];
}
