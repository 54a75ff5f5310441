/**
 * The FrozenLake family of `lake.py` as an envsmith family: a plugin
 * (`plugins: [lake_family.ts]`) that registers it under the name its
 * `describe` gives (`python-lake`). Every hook is a request to the
 * program. `lake.py` is named with `new URL(..., import.meta.url)`, so its
 * content is part of this module's code digest: editing it recomputes the
 * redesigns on this family.
 *
 * @module
 */
import { programFamily } from "../../families/program/program_family.ts";

const program = new URL("./lake.py", import.meta.url);

/** The families this plugin registers. */
export const families = [
  programFamily({ command: ["python3", program.pathname], timeout: 120 }, {
    baseDir: new URL(".", import.meta.url).pathname,
    module: import.meta.url,
  }),
];
