"""envsmith's language-model trainer: micro Llama models over the MAPF-FrozenLake
text format, supervised fine-tuning on solver plans, GRPO rewarded by envsmith's
own dynamics (the `reward` process), and GGUF export for node-llama-cpp.

Run as `python -m envsmith_lm COMMAND` from the `lm/` directory (the `setup:lm`
venv); `deno task` wrappers and the `train.lm` node kind call it.
"""

VERSION = "1"
