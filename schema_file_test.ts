import assert from "node:assert/strict";
import { allKinds, experimentJsonSchema } from "./mod.ts";

Deno.test("schemas/experiment.schema.json is what `deno task schema` writes for the registered kinds", () => {
  const committed = Deno.readTextFileSync(
    new URL("./schemas/experiment.schema.json", import.meta.url),
  );
  const fresh = JSON.stringify(experimentJsonSchema(allKinds), null, 2) + "\n";
  assert.ok(
    committed === fresh,
    "schemas/experiment.schema.json is stale (a kind's parameters changed): run `deno task schema` and commit it",
  );
});
