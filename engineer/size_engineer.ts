/**
 * The engineers of the per-size form: what `engineer:` in a
 * `redesign.sizes` node names. Same shape as the engineer kinds of
 * ordinary configurations (`engineer_kind.ts`: name, description, params,
 * module, create), over the form instead of a configuration: each gets the
 * current form and the per-size context (`size_context.ts`) and proposes
 * the next form, which the node then validates and repairs
 * (`clampSizeForm`).
 *
 * Built in: `fixed` (keep), `random` (a fresh form each stage, drawn from
 * the form's box), `rules` (raise the data and wait ratios of sizes that
 * fail, keep sizes that work), `band` (steer each size's success into a
 * band), `llm` (a language model, with the form's own prompt and reply
 * schema). Every one of them keeps the form's `agents`, `holes` and
 * `horizon`: the paper's engineer edits the per-size ratios only, so the
 * protocol "train on 2-agent boards" holds whatever it proposes.
 *
 * @module
 */
import type * as v from "valibot";
import type { SizeForm } from "../schemas/size_form.ts";
import type { EngineerEvent, LlmTally } from "./engineer.ts";
import type { EngineerEnv } from "./engineer_kind.ts";
import type { BuiltSizeContext } from "./size_context.ts";

/** What a form engineer is given. */
export interface SizeProposeInput {
  /** The context, built for the context type. */
  readonly context: BuiltSizeContext;
  /** The current form. */
  readonly form: SizeForm;
  /** Seed of engineers that draw random numbers. */
  readonly seed: number;
}

/** What a form engineer returns. */
export interface SizeProposal {
  /** The next form (repaired by the node if needed). */
  readonly form: SizeForm;
  /** Why, in a few sentences. */
  readonly rationale: string;
  /** Notable events (rules fired, re-asks, clamps, fallbacks). */
  readonly events: EngineerEvent[];
  /** The context fields the proposal used. */
  readonly reads: string[];
  /** Untrusted replies' tally (`llm`). */
  readonly llm?: LlmTally;
  /** Token usage (`llm`). */
  readonly usage?: {
    promptTokens: number;
    completionTokens: number;
    totalTokens: number;
    requests: number;
  };
  /** Fields added to the node's report (`llm`: prompt digest, model). */
  readonly report?: Record<string, unknown>;
}

/** A form engineer. */
export interface SizeEngineer {
  /** Its kind's name. */
  readonly name: string;
  /** Propose the next form. */
  propose(input: SizeProposeInput): Promise<SizeProposal>;
}

/** A kind of form engineer (registered by name). */
export interface SizeEngineerKind<P = unknown> {
  /** What `engineer: NAME` says. */
  readonly name: string;
  /** One line for `--help` and the JSON Schema. */
  readonly description: string;
  /** Its parameters (the `engineer: { name, ... }` block besides `name` and `context`). */
  readonly params: v.GenericSchema<unknown, P>;
  /** `import.meta.url` of its file: its module graph enters the redesign's key. */
  readonly module: string;
  /** Build the engineer for one redesign. */
  create(params: P, env: EngineerEnv): SizeEngineer;
  /** Content besides the code that enters the key (the `llm` engineer's prompts). */
  fingerprint?(params: unknown, info: { readonly baseDir: string }): unknown;
}

/** Keep the form's agents, holes and horizon; take only the per-size ratios of `next`. */
export function withRatiosOf(current: SizeForm, next: SizeForm): SizeForm {
  return { ...current, sizes: next.sizes };
}
