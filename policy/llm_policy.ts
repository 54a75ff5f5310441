/**
 * The LLM policy: a chat endpoint (an OpenAI-compatible server, or a local
 * GGUF model file run in-process by node-llama-cpp, through the shared
 * clients in `llm/`) is shown each instance as text (mapf's benchmark prompt
 * with our rules and answer format) and answers with a joint plan, one line
 * per agent (`Agent 0: R R D S`). The plan is parsed and executed by the
 * dynamics (`replayPlan`), so slip, holes and collisions apply exactly as for
 * any other policy. A reply that cannot be parsed (no line for an agent, an
 * unknown move, an agent that does not exist) is the outcome
 * `invalid_plan`, not a crash; an endpoint that cannot be reached is an
 * error (the configuration is wrong, not the policy).
 *
 * Results have the same shape as {@linkcode rollout}'s, so `evaluate` and
 * `diagnose` treat an LLM like any other policy.
 *
 * @module
 */
import type { ChatMessage } from "../llm/client.ts";
import {
  type AnyChatOptions,
  chatOptionsFromEndpoint,
  createChatClient,
} from "../llm/endpoint.ts";
import type { LlmEndpoint } from "../schemas/llm.ts";
import type { Instance } from "../mapf/instance.ts";
import {
  parsePlanText,
  PlanParseError,
  renderPrompt,
} from "../mapf/render_text.ts";
import { replayPlan } from "../mapf/replay.ts";
import { mix32 } from "../mapf/rng.ts";
import { encodeTrajectories, type Episode } from "../mapf/trajectory.ts";
import {
  type EpisodeResult,
  type RolloutResult,
  type RolloutSummary,
  summarize,
} from "./rollout.ts";

/** Options of {@linkcode llmRollout}. */
export interface LlmRolloutOptions {
  /** The server or model file and sampling settings (see `llm/endpoint.ts`); or give `endpoint`. */
  chat?: AnyChatOptions;
  /** The endpoint as experiment files write it (`LlmEndpointSchema`); used when `chat` is absent. */
  endpoint?: LlmEndpoint;
  /** Prompt/reply cache directory for `endpoint` (replays offline). */
  cacheDir?: string;
  /** Episodes per instance (they differ in slip draws; with temperature > 0 also in plans). @default 1 */
  episodes?: number;
  /** Seed of the slip draws. @default 0 */
  seed?: number;
  /** Requests in flight at once (a local model answers one at a time). @default 4 */
  concurrency?: number;
  /** System message. @default a one-line role statement */
  system?: string;
  /**
   * The user message: `full` (the benchmark prompt with our rules and
   * answer format) or `bare` (the public benchmark's prompt alone, as the
   * micro LM policies are trained on). @default "full"
   */
  prompt?: PromptStyle;
  /** Record trajectories. @default true */
  record?: boolean;
  /** Called after each finished episode. */
  onProgress?: (done: number, total: number) => void;
  /** Stops early (throws the signal's reason). */
  signal?: AbortSignal;
}

/** Which user message the LLM policy sends (see {@linkcode llmPolicyMessages}). */
export type PromptStyle = "full" | "bare";

/** Default system message. */
export const LLM_SYSTEM =
  "You plan paths for agents on a grid. Follow the answer format exactly.";

/**
 * The messages the LLM policy sends for an instance: the system message and
 * the benchmark prompt (`full`: with our rules and answer format; `bare`:
 * the public benchmark's prompt alone). LM trainers train on exactly these
 * (`deno task cli lm-data`).
 */
export function llmPolicyMessages(
  inst: Instance,
  prompt: PromptStyle = "full",
  system: string = LLM_SYSTEM,
): [ChatMessage, ChatMessage] {
  return [
    { role: "system", content: system },
    {
      role: "user",
      content: renderPrompt(
        inst,
        prompt === "bare" ? { instructions: false } : {},
      ),
    },
  ];
}

/** Extra information per episode of an LLM rollout. */
export interface LlmEpisodeInfo {
  /** Why the plan was invalid, when it was. */
  error?: string;
  /** Hash of the chat request (the reply-cache key). */
  request: string;
  /** Whether the reply came from the cache. */
  cached: boolean;
}

/**
 * Parse a reply into a plan (`plan[agent][t]`), after removing `<think>`
 * blocks. Throws {@linkcode PlanParseError} for an unusable reply.
 */
export function parseLlmPlan(text: string, agents: number): number[][] {
  const visible = text.replace(/<think>[\s\S]*?<\/think>/gi, "").replace(
    /<think>[\s\S]*$/i,
    "",
  );
  return parsePlanText(visible, agents);
}

/** Metrics of one episode of `inst` (arrival times read from the positions). */
export function episodeResult(
  inst: Instance,
  episode: number,
  ep: Episode,
): EpisodeResult {
  const n = ep.agents;
  const ok = ep.outcome === "success";
  let soc = 0;
  if (ok) {
    for (let a = 0; a < n; a++) {
      const goal = inst.goals[a]![0] * inst.width + inst.goals[a]![1];
      let t = 0;
      while (t <= ep.steps && ep.positions[t * n + a] !== goal) t++;
      soc += t;
    }
  }
  return {
    instance: inst.id,
    suite: inst.suite ?? null,
    episode,
    outcome: ep.outcome,
    steps: ep.steps,
    soc: ok ? soc : null,
    makespan: ok ? ep.steps : null,
    ref_soc: inst.reference?.soc ?? null,
    ref_makespan: inst.reference?.makespan ?? null,
  };
}

/** An `invalid_plan` episode: nobody moved. */
function _invalidEpisode(inst: Instance, seed: number): Episode {
  const n = inst.starts.length;
  return {
    instance: inst.id,
    width: inst.width,
    agents: n,
    seed,
    steps: 0,
    positions: Int32Array.from(inst.starts.map(([r, c]) => r * inst.width + c)),
    actions: new Uint8Array(0),
    outcome: "invalid_plan",
    failAgents: [],
    failStep: -1,
  };
}

/**
 * Play every instance `episodes` times with plans from a chat endpoint.
 *
 * @example
 * Not run: it needs an OpenAI-compatible server; llm_policy_test.ts runs a local stub.
 * ```ts ignore
 * const res = await llmRollout(instances, { chat: { baseURL: "http://127.0.0.1:11434/v1", model: "qwen3:4b" } });
 * console.log(res.summary.success_rate, res.summary.outcome_rates.invalid_plan);
 * ```
 */
export async function llmRollout(
  instances: readonly Instance[],
  options: LlmRolloutOptions,
): Promise<RolloutResult & { info: LlmEpisodeInfo[] }> {
  const per = options.episodes ?? 1;
  const seed = options.seed ?? 0;
  const conc = Math.max(1, options.concurrency ?? 4);
  const chat = options.chat ??
    (options.endpoint
      ? chatOptionsFromEndpoint(options.endpoint, options.cacheDir)
      : undefined);
  if (!chat) {
    throw new TypeError("llmRollout needs `chat` options or an `endpoint`");
  }
  const client = createChatClient(chat);
  const total = instances.length * per;
  const results: EpisodeResult[] = new Array(total);
  const episodes: Episode[] = new Array(total);
  const info: LlmEpisodeInfo[] = new Array(total);
  const replies = new Map<
    number,
    Promise<{ text: string; requestHash: string; cached: boolean }>
  >();
  let next = 0, finished = 0;
  const ask = (i: number) => {
    // one request per instance: episodes of an instance replay the same plan
    let p = replies.get(i);
    if (!p) {
      const inst = instances[i]!;
      const messages: ChatMessage[] = llmPolicyMessages(
        inst,
        options.prompt ?? "full",
        options.system ?? LLM_SYSTEM,
      );
      p = client.chat(messages);
      replies.set(i, p);
    }
    return p;
  };
  const worker = async () => {
    for (;;) {
      options.signal?.throwIfAborted();
      const j = next++;
      if (j >= total) return;
      const i = Math.floor(j / per), k = j % per;
      const inst = instances[i]!;
      const reply = await ask(i);
      const epSeed = mix32(seed ^ mix32(j + 1));
      let ep: Episode;
      const meta: LlmEpisodeInfo = {
        request: reply.requestHash,
        cached: reply.cached,
      };
      try {
        const plan = parseLlmPlan(reply.text, inst.starts.length);
        ep = replayPlan(inst, plan, { seed: epSeed, id: inst.id });
      } catch (e) {
        if (!(e instanceof PlanParseError)) throw e;
        ep = _invalidEpisode(inst, epSeed);
        meta.error = e.message;
      }
      episodes[j] = ep;
      results[j] = episodeResult(inst, k, ep);
      info[j] = meta;
      options.onProgress?.(++finished, total);
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(conc, Math.max(1, total)) }, worker),
  );
  const suites: Record<string, RolloutSummary> = {};
  const keys = [...new Set(results.map((r) => r.suite ?? ""))].sort();
  for (const key of keys) {
    suites[key] = summarize(results.filter((r) => (r.suite ?? "") === key));
  }
  const out: RolloutResult & { info: LlmEpisodeInfo[] } = {
    episodes: results,
    summary: summarize(results),
    suites,
    info,
  };
  if (options.record ?? true) out.trajectories = encodeTrajectories(episodes);
  return out;
}
