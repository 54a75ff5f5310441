/**
 * The fault campaign (`faults/campaign.ts`) over many seeds: each seed a
 * fresh cache and `STEPS` random steps (runs, SIGKILLs, a run and a gc at
 * once, damaged manifests, entries, blobs and locks, imports killed or not,
 * full and read-only disks where a tmpfs can be mounted), every invariant
 * checked after every step. Prints one line per seed and the totals that
 * docs/faults.md records; exits 1 when any seed violated an invariant
 * (its line names the step and what failed: rerun that seed to replay it).
 *
 * Run: `deno run -A bench/fault_campaign.ts [SEEDS] [STEPS] [FIRST_SEED]`
 * (defaults 8, 60, 1).
 *
 * @module
 */
import { runCampaign } from "../faults/campaign.ts";

const seeds = Number(Deno.args[0] ?? 8);
const steps = Number(Deno.args[1] ?? 60);
const first = Number(Deno.args[2] ?? 1);
let survived = 0, kills = 0, refusals = 0, compared = 0, failed = 0;
const kinds: Record<string, number> = {};
const t0 = performance.now();
for (let seed = first; seed < first + seeds; seed++) {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-campaign-" });
  const s0 = performance.now();
  try {
    const r = await runCampaign({ steps, seed, dir });
    survived += r.survived;
    kills += r.kills;
    refusals += r.refusals;
    compared += r.compared;
    for (const [k, n] of Object.entries(r.kinds)) {
      kinds[k] = (kinds[k] ?? 0) + n;
    }
    if (r.failure) failed++;
    console.log(
      `seed ${seed}: ${r.survived}/${
        steps + 1
      } steps survived, ${r.kills} kills, ${r.refusals} gc refusals, ${r.compared} runs compared value by value, ${
        ((performance.now() - s0) / 1000).toFixed(0)
      } s${
        r.skippedMounts
          ? ` (no full disk or read-only: ${r.skippedMounts})`
          : ""
      }${r.failure ? `; FAILED ${r.failure}` : ""}`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
console.log(
  `${seeds} seeds x ${steps} steps: ${survived} steps survived (${failed} seeds failed), ${kills} kills, ${refusals} gc refusals, ${compared} runs compared; steps by kind: ${
    Object.entries(kinds).sort().map(([k, n]) => `${k} ${n}`).join(", ")
  }; ${((performance.now() - t0) / 60000).toFixed(1)} min`,
);
if (failed > 0) Deno.exit(1);
