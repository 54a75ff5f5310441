/**
 * The mutation list of `deno task mutate` (faults/mutate.ts): small wrong
 * edits of the code that decides results, each of which a test beside that
 * code must catch. Each names its file, an exact snippet of it (unique in
 * the file), the replacement, and the tests (in the mutated file's folder)
 * that must fail on it. When the code moves, `deno task mutate` stops and
 * names the mutation whose snippet it no longer finds; update the snippet.
 * `fast: true` marks the quicker subset (`deno task mutate --fast`), for CI should
 * the whole list outgrow its 4-minute budget (.ci/run runs the whole list now).
 *
 * @module
 */

/** One mutation. */
export interface Mutation {
  /** Unique name, `area-what` (`--only` takes it). */
  name: string;
  /** File it edits, relative to the repository root. */
  file: string;
  /** The exact original snippet (occurs once in `file`). */
  from: string;
  /** What replaces it. */
  to: string;
  /** Test files beside `file` that must fail on the mutated code. */
  tests: string[];
  /** Seconds its tests may take before a hang counts as killed. @default 120 */
  timeoutS?: number;
  /** In the quicker subset (`--fast`). */
  fast?: boolean;
  /** What the mutation would do to results, in a sentence. */
  why: string;
}

/** Every mutation, grouped by what it breaks. */
export const MUTATIONS: readonly Mutation[] = [
  // keys and digests
  {
    name: "digest-ignores-dynamic-import",
    file: "engine/cache/digest.ts",
    from: "  for (const m of text.matchAll(_DYNAMIC_RE)) out.push(m[1]!);\n",
    to: "",
    tests: ["engine/cache/digest_test.ts"],
    fast: true,
    why:
      "a package loaded lazily (node-llama-cpp by llm/local.ts) drops out of the keys: its upgrade reuses stale results",
  },
  {
    name: "digest-counts-type-imports",
    file: "engine/cache/digest.ts",
    from: "if (!m[2] || options.types) out.push(m[3]!);",
    to: "out.push(m[3]!);",
    tests: ["engine/cache/digest_test.ts"],
    fast: true,
    why: "editing a type moves keys of code that runs nothing of it",
  },
  {
    name: "digest-ignores-locked-version",
    file: "engine/cache/digest.ts",
    from: 'if (locked) return `${m[1]}:${m[2]}@${locked.split("_")[0]}`;',
    to: "",
    tests: ["engine/cache/digest_test.ts"],
    fast: true,
    why:
      "the key records a version range, so a package upgrade within it reuses results",
  },
  {
    name: "key-drops-field-path",
    file: "engine/cache/keys.ts",
    from: ": { $ref: { key: dep.key, path: [...ref.path] } };",
    to: ": { $ref: { key: dep.key, path: [] } };",
    tests: ["engine/cache/keys_test.ts"],
    fast: true,
    why: "two nodes reading different fields of one input share a key",
  },
  {
    name: "key-ignores-code",
    file: "engine/cache/keys.ts",
    from: "      code,\n      params,\n",
    to: '      code: "",\n      params,\n',
    tests: ["engine/cache/keys_test.ts"],
    fast: true,
    why: "editing a kind's code reuses its old results",
  },
  {
    name: "key-ignores-fingerprint",
    file: "engine/cache/keys.ts",
    from: "      ...(fingerprint !== undefined ? { fingerprint } : {}),",
    to: "      ...({}),",
    tests: ["engine/cache/keys_test.ts"],
    fast: true,
    why: "editing a node's input file reuses results computed from the old one",
  },
  {
    name: "digest-ignores-data-files",
    file: "engine/cache/digest.ts",
    from: "          _addPath(p, root, files);",
    to: "          void _addPath;",
    tests: ["engine/cache/keys_test.ts"],
    fast: true,
    why:
      "editing a prompt file a kind reads (new URL(..., import.meta.url)) reuses old results",
  },
  // the store's verification
  {
    name: "store-skips-entry-hash",
    file: "engine/cache/store.ts",
    from: "if (sha256Hex(body) !== m[1]) {",
    to: "if (sha256Hex(body) === m[1] && false) {",
    tests: ["engine/cache/store_test.ts"],
    fast: true,
    why: "a truncated or edited entry is read as a result",
  },
  {
    name: "store-skips-blob-hash",
    file: "engine/cache/store.ts",
    from: "if (sha256Hex(bytes) !== ref.$blob) {",
    to: "if (sha256Hex(bytes) === ref.$blob && false) {",
    tests: ["engine/cache/store_test.ts"],
    fast: true,
    why: "a modified blob (a policy, trajectories) is read as the original",
  },
  // PLR / ACCEL scoring and selection
  {
    name: "pvl-sums-absolute-advantages",
    file: "policy/pvl.ts",
    from: "if (a > 0) positive[l] = positive[l]! + a;",
    to: "positive[l] = positive[l]! + Math.abs(a);",
    tests: ["policy/pvl_test.ts"],
    fast: true,
    why:
      "PLR and ACCEL rank levels by |A| (L1 value loss), not positive value loss",
  },
  {
    name: "pvl-sum-not-mean",
    file: "policy/pvl.ts",
    from: "out[i] = n > 0 ? positive[i]! / n : 0;",
    to: "out[i] = n > 0 ? positive[i]! : 0;",
    tests: ["policy/pvl_test.ts"],
    fast: true,
    why: "long levels score higher for their length",
  },
  {
    name: "plr-replay-order-reversed",
    file: "engineer/plr.ts",
    from: "scores[b]! - scores[a]! || a - b",
    to: "scores[a]! - scores[b]! || a - b",
    tests: ["engineer/plr_test.ts"],
    fast: true,
    why: "PLR replays the lowest-regret levels most",
  },
  {
    name: "plr-staleness-ignores-now",
    file: "engineer/plr.ts",
    from: "const stale = seen.map((s) => Math.max(0, now - s));",
    to: "const stale = seen.map((s) => Math.max(0, s));",
    tests: ["engineer/plr_test.ts"],
    fast: true,
    why: "the staleness term favours recently seen levels",
  },
  {
    name: "plr-evicts-highest",
    file: "engineer/plr.ts",
    from: "b.score - a.score || b.seen - a.seen || a.id.localeCompare(b.id)",
    to: "a.score - b.score || b.seen - a.seen || a.id.localeCompare(b.id)",
    tests: ["engineer/plr_test.ts"],
    why: "the buffer keeps the lowest-regret levels",
  },
  {
    name: "accel-edits-lowest-regret",
    file: "engineer/accel.ts",
    from:
      "b.score - a.score || a.id.localeCompare(b.id)\n      ).slice(0, count);",
    to:
      "a.score - b.score || a.id.localeCompare(b.id)\n      ).slice(0, count);",
    tests: ["engineer/accel_test.ts"],
    fast: true,
    why: "ACCEL edits the levels the policy already solves",
  },
  // the crossed bootstrap, Holm, TOST
  {
    name: "bootstrap-instances-not-resampled",
    file: "engine/tables/crossed_bootstrap.ts",
    from: "c[col[Math.floor((s / 4294967296) * m)]!]!++;",
    to: "c[col[i]!]!++;",
    tests: ["engine/tables/crossed_bootstrap_test.ts"],
    fast: true,
    why:
      "intervals ignore instance variance: too narrow, too many significant rows",
  },
  {
    name: "bootstrap-seeds-not-resampled",
    file: "engine/tables/crossed_bootstrap.ts",
    from: "draws[k] = s / 4294967296;",
    to: "draws[k] = (k + 0.5) / seeds;",
    tests: ["engine/tables/crossed_bootstrap_test.ts"],
    fast: true,
    why: "intervals ignore seed variance",
  },
  {
    name: "holm-is-bonferroni",
    file: "engine/tables/paired_stats.ts",
    from: "running = Math.max(running, Math.min(1, (m - k) * p!));",
    to: "running = Math.max(running, Math.min(1, m * p!));",
    tests: ["engine/tables/paired_stats_test.ts"],
    fast: true,
    why:
      "adjusted p-values too large: true differences reported as not significant",
  },
  {
    name: "holm-not-monotone",
    file: "engine/tables/paired_stats.ts",
    from: "running = Math.max(running, Math.min(1, (m - k) * p!));",
    to: "running = Math.min(1, (m - k) * p!);",
    tests: ["engine/tables/paired_stats_test.ts"],
    fast: true,
    why: "a larger raw p-value can get a smaller adjusted one",
  },
  {
    name: "tost-takes-smaller-side",
    file: "engine/tables/bootstrap_interval.ts",
    from: "return { lower, upper, p: Math.max(lower, upper) };",
    to: "return { lower, upper, p: Math.min(lower, upper) };",
    tests: ["engine/tables/bootstrap_interval_test.ts"],
    fast: true,
    why: "equivalence claimed when only one of the two one-sided tests rejects",
  },
  {
    name: "bootstrap-p-one-sided",
    file: "engine/tables/bootstrap_interval.ts",
    from: "return Math.min(1, (2 * (1 + Math.min(below, above))) / (B + 1));",
    to: "return Math.min(1, (1 + Math.min(below, above)) / (B + 1));",
    tests: ["engine/tables/bootstrap_interval_test.ts"],
    fast: true,
    why: "two-sided p-values halved: twice the false positives",
  },
  // the reward (PPO) and the LM reward
  {
    name: "reward-hole-as-collision",
    file: "policy/reward.ts",
    from: "if (ev & EV_FELL) r += spec.hole;",
    to: "if (ev & EV_FELL) r += spec.collision;",
    tests: ["policy/reward_test.ts"],
    fast: true,
    why: "the hole coefficient has no effect",
  },
  {
    name: "reward-progress-reversed",
    file: "policy/reward.ts",
    from: "r += spec.progress * (d0 - d1);",
    to: "r += spec.progress * (d1 - d0);",
    tests: ["policy/reward_test.ts"],
    fast: true,
    why: "moving away from the goal is rewarded",
  },
  {
    name: "reward-arrival-not-terminal",
    file: "policy/reward.ts",
    from: "done[off + i] = ended || (ev & EV_REACHED) !== 0 ? 1 : 0;",
    to: "done[off + i] = ended ? 1 : 0;",
    tests: ["policy/reward_test.ts"],
    fast: true,
    why: "an arrived agent's return bootstraps past its arrival",
  },
  {
    name: "lm-reward-on-goal-not-a-share",
    file: "policy/plan_reward.ts",
    from: "(REWARD_VALID_PLAN + REWARD_ON_GOAL * onGoal / n)",
    to: "(REWARD_VALID_PLAN + REWARD_ON_GOAL * onGoal)",
    tests: ["policy/plan_reward_test.ts"],
    fast: true,
    why: "a failed plan with many agents on their goals outscores a success",
  },
  {
    name: "lm-reward-pays-invalid-plans",
    file: "policy/plan_reward.ts",
    from: '      reward: 0,\n      outcome: "invalid_plan",',
    to: '      reward: REWARD_VALID_PLAN,\n      outcome: "invalid_plan",',
    tests: ["policy/plan_reward_test.ts"],
    fast: true,
    why: "an unparsable completion earns the valid-plan reward",
  },
  // the collision rules
  {
    name: "collision-vertex-ignored",
    file: "mapf/batch_env.ts",
    from: "          if (tgtStamp[q] === stamp) {",
    to: "          if (tgtStamp[q] === stamp && false) {",
    tests: ["mapf/batch_env_test.ts"],
    fast: true,
    why: "two agents may enter one cell",
  },
  {
    name: "collision-swap-ignored",
    file: "mapf/batch_env.ts",
    from: "if (b > a && tgt[b] === p) {",
    to: "if (b > a && tgt[b] === p && false) {",
    tests: ["mapf/batch_env_test.ts"],
    fast: true,
    why: "two agents may swap cells through each other",
  },
  {
    name: "collision-block-swap-ignored",
    file: "mapf/batch_env.ts",
    from: "else if (tgt[b] === p) bit = EV_EDGE; // swap",
    to: "else if (tgt[b] === p && false) bit = EV_EDGE; // swap",
    tests: ["mapf/batch_env_test.ts"],
    why: "in block mode a swap goes through",
  },
  // the rules engineer's thresholds
  {
    name: "rules-mastered-strict",
    file: "engineer/rules.ts",
    from: "const level = s >= T.mastered",
    to: "const level = s > T.mastered",
    tests: ["engineer/rules_test.ts"],
    fast: true,
    why: "a config at exactly the mastery threshold is not hardened",
  },
  {
    name: "rules-struggling-inclusive",
    file: "engineer/rules.ts",
    from: "    : s < T.struggling\n",
    to: "    : s <= T.struggling\n",
    tests: ["engineer/rules_test.ts"],
    fast: true,
    why: "a config at exactly the struggling threshold is eased",
  },
  // warm-worker replacement
  {
    name: "worker-kept-after-failure",
    file: "engine/run/worker_pool.ts",
    from:
      "          this.#stats.replacedAfterFailure++;\n          this.#retire(slot);",
    to:
      "          this.#stats.replacedAfterFailure++;\n          this.#idle.push(slot);",
    tests: ["engine/run/worker_pool_test.ts"],
    timeoutS: 60,
    why: "a worker whose node failed (its state unknown) runs the next node",
  },
  {
    name: "worker-memory-bound-ignored",
    file: "engine/run/worker_pool.ts",
    from: "heap !== undefined && heap > this.memoryBytes",
    to: "heap !== undefined && heap > Infinity",
    tests: ["engine/run/worker_pool_test.ts"],
    why: "a worker grows without bound instead of being retired",
  },
];
