/**
 * The environment-engineer interface: `propose(context, current config) ->
 * next config + rationale`, shared by every engineer, built-in or a
 * plugin's. Engineer kinds (how one is named, configured and created) are
 * in `engineer_kind.ts`.
 *
 * @module
 */
import type { AnyEnvConfig } from "../schemas/env_config.ts";
import type { BuiltContext } from "./context.ts";
import type { EngineerCost, LevelSetProposal } from "./levels.ts";

/** Something notable that happened while proposing (for the redesign report). */
export interface EngineerEvent {
  /**
   * `rule` (a rule fired), `retry` (a rejected LLM reply was re-asked),
   * `clamped` (values were repaired), `fallback` (the previous config was
   * kept), `llm_error` (the endpoint failed), `cached` (the reply came from
   * the cache), `http_retry` (the client retried an HTTP attempt),
   * `truncated` (a reply was cut off at `max_tokens` before its JSON was
   * complete), `format_rejected` (the server refused the `response_format`
   * and was asked without it), `program_error` (an `exec` engineer's
   * program timed out, crashed, flooded its output or could not start),
   * `choice` (a baseline engineer's decision and the numbers it rests on:
   * scores, probabilities, candidates).
   */
  type:
    | "rule"
    | "retry"
    | "clamped"
    | "fallback"
    | "llm_error"
    | "cached"
    | "http_retry"
    | "truncated"
    | "format_rejected"
    | "program_error"
    | "choice";
  /** What happened, in one line. */
  detail: string;
}

/** What an engineer is given. */
export interface ProposeInput {
  /** The context (JSON for programs, text for LLMs), built for the context type. */
  context: BuiltContext;
  /** The current configuration. */
  config: AnyEnvConfig;
  /** Seed for engineers that draw random numbers. */
  seed: number;
}

/**
 * What happened in one llm redesign, as counts: the tables show their mean
 * per row (a fallback rate, re-asks per stage, a clamp rate).
 */
export interface LlmTally {
  /** Redesigns (always 1: a mean over stages and seeds is a rate). */
  calls: number;
  /** Chat requests, re-asks included. */
  requests: number;
  /** Replies rejected and asked again. */
  reasks: number;
  /** 1 when the accepted reply needed repairs (clamped values). */
  clamped: number;
  /** Replies cut off at `max_tokens` before their JSON was complete. */
  truncated: number;
  /** 1 when no reply was usable and the previous config was kept. */
  fallback: number;
  /** Replies served from the reply cache. */
  cached: number;
}

/** What an engineer returns. */
export interface Proposal {
  /** The next configuration (valid: passes `parseEnvConfig`). */
  config: AnyEnvConfig;
  /** Why, in a few sentences. */
  rationale: string;
  /** Notable events. */
  events: EngineerEvent[];
  /** Which context fields the proposal actually used (e.g. `stats.success_rate`). */
  reads: string[];
  /** LLM token usage, when an LLM was asked. */
  usage?: {
    promptTokens: number;
    completionTokens: number;
    totalTokens: number;
    requests: number;
  };
  /**
   * The tally of untrusted replies (an `llm` engineer's model, an `exec`
   * engineer's program); absent for other engineers. The tables show it as
   * `report.llm.*`.
   */
  llm?: LlmTally;
  /**
   * Fields the engineer adds to the redesign node's report (the `llm`
   * engineer: `prompt`, `prompt_digest`, `model`).
   */
  report?: Record<string, unknown>;
  /**
   * Rollouts the engineer ran with no learning (`probe`, `plr`, `accel`):
   * engineer cost, reported beside the training experience, never in it.
   */
  cost?: EngineerCost;
  /**
   * The level buffer of an instance-level engineer (`plr`, `accel`): the
   * next stage trains on levels drawn from it by `replay`; `config` is then
   * the configuration new levels come from. The engineer kind stores it and
   * gives it as `value`.
   */
  levels?: LevelSetProposal;
  /**
   * The redesign node's value when it is not `config` (JSON): the stored
   * level set of `plr` and `accel`, which the next `generate` draws from.
   */
  value?: unknown;
}

/** An environment engineer. */
export interface Engineer {
  /** Its kind's name (`rules`, `llm`, `exec`, a plugin's, ...). */
  readonly name: string;
  /** Propose the next configuration. */
  propose(input: ProposeInput): Promise<Proposal>;
}
