/**
 * The environment-engineer interface: `propose(context, current config) ->
 * next config + rationale`, shared by every engineer (fixed, random, rules,
 * replay, llm).
 *
 * @module
 */
import type { AnyEnvConfig } from "../schemas/env_config.ts";
import type { BuiltContext } from "./context.ts";

/** Something notable that happened while proposing (for the redesign report). */
export interface EngineerEvent {
  /**
   * `rule` (a rule fired), `retry` (a rejected LLM reply was re-asked),
   * `clamped` (values were repaired), `fallback` (the previous config was
   * kept), `llm_error` (the endpoint failed), `cached` (the reply came from
   * the cache), `http_retry` (the client retried an HTTP attempt).
   */
  type:
    | "rule"
    | "retry"
    | "clamped"
    | "fallback"
    | "llm_error"
    | "cached"
    | "http_retry";
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
}

/** An environment engineer. */
export interface Engineer {
  /** Its name (`fixed`, `random`, `rules`, `replay`, `llm`, `scripted`, `blind`). */
  readonly name: string;
  /** Propose the next configuration. */
  propose(input: ProposeInput): Promise<Proposal>;
}

/** The names of the engineers. */
export const ENGINEER_NAMES = [
  "fixed",
  "random",
  "rules",
  "replay",
  "llm",
  "scripted",
  "blind",
] as const;

/** An engineer name. */
export type EngineerName = typeof ENGINEER_NAMES[number];
