/**
 * Build an engineer by name.
 *
 * @module
 */
import type { AnyChatOptions } from "../llm/endpoint.ts";
import {
  type Engineer,
  ENGINEER_NAMES,
  type EngineerName,
} from "./engineer.ts";
import { blindEngineer, type Pace } from "./blind.ts";
import { fixedEngineer } from "./fixed.ts";
import { llmEngineer, type PromptVariant } from "./llm.ts";
import { randomEngineer } from "./random.ts";
import { replayEngineer } from "./replay.ts";
import { rulesEngineer } from "./rules.ts";
import { scriptedEngineer } from "./scripted.ts";
import { type DrBox, drEngineer } from "./dr.ts";
import { bandEngineer } from "./band.ts";
import type { CurriculumDim } from "./config_ops.ts";
import { type ProbeCriterion, probeEngineer, type Prober } from "./probe.ts";
import { type LevelIo, plrEngineer } from "./plr.ts";
import { accelEngineer } from "./accel.ts";

/** Options of {@linkcode createEngineer}. */
export interface CreateEngineerOptions {
  /** Server or model file of the `llm` engineer (required for it). */
  chat?: AnyChatOptions;
  /** Prompt variant of the `llm` engineer. @default {"neutral"} */
  prompt?: PromptVariant;
  /** How the `llm` engineer's replies are constrained. @default {"json_schema"} */
  constrain?: "json_schema" | "json_object" | "none";
  /** Re-asks of the `llm` engineer. @default {2} */
  reasks?: number;
  /** What an endpoint failure does (`llm`). @default {"throw"} */
  onEndpointError?: "throw" | "fallback";
  /** The configuration the `scripted` engineer proposes (required for it). */
  script?: unknown;
  /** The informed move whose pace `blind` copies (required for it). */
  pace?: Pace;
  /** The box `dr` draws from (and `plr`/`accel` draw new levels from). */
  box?: DrBox;
  /** Points `dr` draws per stage. */
  draws?: number;
  /** `band`: lower edge. */
  lo?: number;
  /** `band`: upper edge. */
  hi?: number;
  /** `band`: dimensions stepped, in order. */
  order?: readonly CurriculumDim[];
  /** `probe`: candidates, the current config included. */
  candidates?: number;
  /** `probe`: pick criterion. */
  criterion?: ProbeCriterion;
  /** `probe`: target success. */
  target?: number;
  /** `probe`, `probe-base`: scores candidates with the probing policy (required for them). */
  prober?: Prober;
  /** `plr`, `accel`: the buffer, training scores and scoring rollouts (required for them). */
  levels?: LevelIo;
  /** `plr`, `accel`: buffer capacity. */
  buffer?: number;
  /** `plr`, `accel`: replay probability. */
  replayProb?: number;
  /** `plr`, `accel`: rank temperature. */
  beta?: number;
  /** `plr`, `accel`: staleness mixing. */
  rho?: number;
  /** `accel`: levels edited per stage. */
  edits?: number;
  /** `accel`: edits per level. */
  editSteps?: number;
  /** `accel`: most agents an edit makes. */
  maxAgents?: number;
}

function _defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) if (x !== undefined) out[k] = x;
  return out as Partial<T>;
}

/** An unknown engineer name, or `llm` without an endpoint. */
export class EngineerConfigError extends TypeError {
  /** Build the error. */
  constructor(message: string) {
    super(message);
    this.name = "EngineerConfigError";
  }
}

/** Whether a string names an engineer. */
export function isEngineerName(x: unknown): x is EngineerName {
  return typeof x === "string" &&
    (ENGINEER_NAMES as readonly string[]).includes(x);
}

/**
 * Build an engineer by name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createEngineer } from "./registry.ts";
 * assert.equal(createEngineer("rules").name, "rules");
 * ```
 * @throws {EngineerConfigError} for an unknown name or `llm` without `chat`.
 */
export function createEngineer(
  name: string,
  options: CreateEngineerOptions = {},
): Engineer {
  switch (name) {
    case "fixed":
      return fixedEngineer();
    case "random":
      return randomEngineer();
    case "rules":
      return rulesEngineer();
    case "replay":
      return replayEngineer();
    case "llm":
      if (options.chat === undefined) {
        throw new EngineerConfigError(
          "The llm engineer needs an endpoint: a server (YAML: with.llm: { base_url, model, api_key_env }; CLI: --base-url URL --model M [--api-key-env VAR]) or a GGUF model file (YAML: with.llm: { gguf: FILE } or { gguf_env: ENVSMITH_LLM_GGUF }; CLI: --gguf FILE, or ENVSMITH_LLM_GGUF=FILE).",
        );
      }
      return llmEngineer({
        chat: options.chat,
        ...(options.reasks === undefined ? {} : { reasks: options.reasks }),
        ...(options.prompt === undefined ? {} : { prompt: options.prompt }),
        ...(options.constrain === undefined
          ? {}
          : { constrain: options.constrain }),
        ...(options.onEndpointError === undefined
          ? {}
          : { onEndpointError: options.onEndpointError }),
      });
    case "scripted":
      if (options.script === undefined) {
        throw new EngineerConfigError(
          "The scripted engineer replays a configuration: give `script` (YAML: with.script: a config, usually a reference to another run's redesign, e.g. $config[context=full,seed=+1]).",
        );
      }
      return scriptedEngineer(options.script);
    case "blind":
      if (options.pace === undefined) {
        throw new EngineerConfigError(
          "The blind engineer copies the pace of an informed run: give `pace: [FROM, TO]` (that run's config before and after this stage's redesign).",
        );
      }
      return blindEngineer(options.pace);
    case "dr":
      return drEngineer(_defined({ box: options.box, draws: options.draws }));
    case "band":
      return bandEngineer(
        _defined({ lo: options.lo, hi: options.hi, order: options.order }),
      );
    case "probe":
    case "probe-base":
      if (options.prober === undefined) {
        throw new EngineerConfigError(
          `The ${name} engineer rolls a policy out on candidate configurations: give \`policy\` (YAML: with.policy: $policy for probe, $start for probe-base); it runs inside an experiment, not from the redesign command.`,
        );
      }
      return probeEngineer({
        prober: options.prober,
        name,
        ..._defined({
          candidates: options.candidates,
          criterion: options.criterion,
          target: options.target,
        }),
      });
    case "plr":
    case "accel": {
      if (options.levels === undefined) {
        throw new EngineerConfigError(
          `The ${name} engineer replays instances: give \`policy\` (this stage's train node, e.g. $policy) and \`envs\` (its training instances, e.g. $envs); it runs inside an experiment, not from the redesign command.`,
        );
      }
      const plr = _defined({
        buffer: options.buffer,
        replayProb: options.replayProb,
        beta: options.beta,
        rho: options.rho,
      });
      return name === "plr"
        ? plrEngineer({ io: options.levels, ...plr })
        : accelEngineer({
          io: options.levels,
          ...plr,
          ..._defined({
            edits: options.edits,
            editSteps: options.editSteps,
            maxAgents: options.maxAgents,
          }),
        });
    }
    default:
      throw new EngineerConfigError(
        `Unknown engineer "${name}"; use one of ${ENGINEER_NAMES.join(", ")}.`,
      );
  }
}
