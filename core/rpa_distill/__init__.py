"""AutoRPA: distil ReAct agent trajectories into robust RPA functions (reconstruction).

Chen, Hu, Yu, Yin, "AutoRPA", ICML 2026 (arXiv 2605.21082). No code is public; everything
here is a reconstruction from the paper's summary and the mlx26 issue: environments
(:mod:`.synthetic`, :mod:`.miniwob_env`), agents (:mod:`.oracle`, :mod:`.react` with the
scripted policy :mod:`.rules`), recording (:mod:`.record`), the translator
(:mod:`.selectors`, :mod:`.align`, :mod:`.translate`), the builder (:mod:`.antiunify`,
:mod:`.builder`, :mod:`.rag`), the code whitelist (:mod:`.whitelist`), execution with fallback
(:mod:`.runtime`) and the pipeline (:mod:`.distill`, :mod:`.pipeline`).
"""

from mlx26.core.rpa_distill.distill import compile_function, distill, summarize, verify
from mlx26.core.rpa_distill.env import env_names, family, make_env
from mlx26.core.rpa_distill.record import record_episode

__all__ = ["compile_function", "distill", "env_names", "family", "make_env", "record_episode", "summarize",
           "verify"]
