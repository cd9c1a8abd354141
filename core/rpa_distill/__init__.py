"""AutoRPA: distil ReAct agent trajectories into robust RPA functions (reconstruction).

Chen, Hu, Yu, Yin, "AutoRPA", ICML 2026 (arXiv 2605.21082). No code is public; everything
here is a reconstruction from the paper's summary and the mlx26 issue: environments
(:mod:`.synthetic`, :mod:`.miniwob_env`, a user's own page :mod:`.html_env`), agents (:mod:`.oracle`, :mod:`.react` with the
scripted policy :mod:`.rules`), recording (:mod:`.record`), the translator
(:mod:`.selectors`, :mod:`.align`, :mod:`.translate`), the builder (:mod:`.antiunify`,
:mod:`.builder`, :mod:`.rag`; the LLM builder :mod:`.llm_builder`), the code whitelist (:mod:`.whitelist`), execution with fallback
(:mod:`.runtime`) and the pipeline (:mod:`.distill`, :mod:`.pipeline`).
"""

from mlx26.core.common.lazy import lazy_exports

# {submodule: the names it exports}: each is imported on first use, so importing the package
# (and its stdlib-only .spec, which the CLI reads for --help) loads nothing heavy.
__all__ = lazy_exports(__name__, {
    "distill": ("compile_function", "distill", "summarize", "verify"),
    "env": ("env_names", "family", "make_env"),
    "record": ("record_episode",),
})
