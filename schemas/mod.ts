/**
 * Valibot schemas shared across envsmith: the MAPF-FrozenLake environment
 * configuration (what engineers edit), experiment files, node parameters,
 * artifacts and LLM replies. Each schema lives in its own file; this module
 * re-exports them.
 *
 * @module
 */
export * from "./env_config.ts";
export * from "./findings.ts";
export * from "./llm.ts";
