"""The choices of ``mlx26 rpa-distill``, shared by the CLI and the core (standard library only).

``mlx26.cli.rpa_distill`` imports this at module level; :mod:`.pipeline` imports the same tuple.
"""

AGENTS = ("oracle", "react")  # oracle: the scripted policy (no LLM); react: the LLM agent
BUILDERS = ("synth", "llm", "auto")  # rule synthesiser; the LLM writes the function; synth, then llm if needed
TRANSLATORS = ("rules", "llm")  # rule translator; the LLM proposes selectors, checked against the snapshot
