/**
 * What the `families` subcommand prints (each family with its dimensions:
 * bounds, step, direction of difficulty, and its presets and suites) and
 * what `schema` writes per family (a JSON Schema of its configuration,
 * with the descriptions of its fields).
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { toJsonSchema } from "@valibot/to-json-schema";
import type { FamilyRegistry } from "../families/registry.ts";
import type { EnvironmentFamily } from "../families/family.ts";

/**
 * One block per family: `name: description`, then a line per dimension
 * (`  size  2..64 step 2, harder up: ...`), presets and suites.
 */
export function familyListing(families: FamilyRegistry): string[] {
  const out: string[] = [];
  for (const f of families.list()) {
    out.push(`${f.name}: ${f.description} (${families.origin(f.name)})`);
    for (const d of f.dimensions) {
      out.push(
        `  ${d.path}  ${d.min}..${d.max}${
          d.integer ? " integer" : ""
        } step ${d.step}, harder ${d.harder}: ${d.description}`,
      );
    }
    out.push(`  presets: ${Object.keys(f.presets).join(", ")}`);
    const suites = Object.entries(f.suites);
    if (suites.length > 0) {
      out.push(
        `  suites: ${suites.map(([n, s]) => `${n} (${s.split})`).join(", ")}`,
      );
    }
    out.push(
      `  mutation: ${
        f.mutate === undefined ? "none (accel cannot edit it)" : "yes"
      }`,
    );
  }
  return out;
}

/**
 * The JSON Schema of a family's configuration (descriptions included;
 * checks JSON Schema cannot express are left out), with its dimensions
 * as `x-dimensions`.
 */
export function familyJsonSchema(
  family: EnvironmentFamily,
): Record<string, unknown> {
  const s = toJsonSchema(family.schema, { errorMode: "ignore" }) as Record<
    string,
    unknown
  >;
  return {
    ...s,
    title: `${family.name} configuration`,
    description: family.description,
    "x-dimensions": family.dimensions,
  };
}

/**
 * Writes `family.NAME.schema.json` for every family beside the experiment
 * schema `experimentSchema`; returns the files written.
 */
export function familySchemas(
  families: FamilyRegistry,
  experimentSchema: string,
): string[] {
  const dir = dirname(experimentSchema);
  return families.list().map((f) => {
    const file = join(dir, `family.${f.name}.schema.json`);
    writeFileSync(file, JSON.stringify(familyJsonSchema(f), null, 2) + "\n");
    return file;
  });
}
