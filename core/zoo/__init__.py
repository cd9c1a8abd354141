"""The mlx26 model zoo: small causal LMs and corpora that mlx26 trains and ships itself.

Our own infrastructure (no paper reconstructed; see docs/zoo.md). Other features use:

    from mlx26.core.zoo import load_model, load_tokenizer, resolve_model_path, corpus

* ``load_model(NAME | PATH | hub-id)`` → a transformers causal LM in eval mode
  (zoo names and folders never touch the network; hub ids only when given explicitly).
* ``load_tokenizer(...)`` → its ``PreTrainedTokenizerFast`` (``bpe-4096`` / ``byte`` too).
* ``resolve_model_path(...)`` → a folder (or the hub id) for tools that take a path.
* ``corpus(ID)`` → a :class:`~mlx26.core.zoo.corpora.Corpus` (``stdlib-code``,
  ``stdlib-prose``, ``shakespeare``, ``arithmetic``) with ``documents(split)``,
  ``text(split, max_bytes)`` and ``content_hash(split)``.

torch and transformers are imported only inside the functions that need them.
"""

from mlx26.core.common.lazy import lazy_exports

# {submodule: the names it exports}: each is imported on first use, so importing the package
# (and its stdlib-only .spec, which the CLI reads for --help) loads nothing heavy.
__all__ = lazy_exports(__name__, {
    "corpora": ("CORPORA", "Corpus", "Document", "corpus"),
    "presets": ("PRESETS", "Preset", "get_preset"),
    "registry": ("list_models", "load_model", "load_tokenizer", "read_manifest", "resolve_model_path",
                 "shipped_names", "zoo_names"),
})
