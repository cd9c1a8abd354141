"""MR.PEA: self-supervised prompt optimisation by meta-reasoning, with a hard budget.

Paper: "Prompt Optimization with Minimal Unlabeled Input via Meta-Reasoning" (MR.PEA, ICML 2026).
No public code exists: everything here is a **reconstruction** from the abstract — meta-reasoning
builds task knowledge iteratively (problem-solving strategies, evaluation criteria), adaptively
retrieves external information, and uses that knowledge to generate diverse validation examples,
make targeted prompt refinements and assess quality, with no labels — and from the published
self-supervised optimisers it builds on: SPO (Xiang et al. 2025, MetaGPT ``metagpt/ext/spo``:
pairwise output comparison without references), APE (Zhou et al. 2023: instruction resampling),
OPRO and PE2 (meta-prompts carrying the optimisation history). The prompts, reply formats, the
round structure, the acceptance rule and the budget estimate are ours.

Modules: :mod:`.tasks` (task files, GSM8K/BBH loaders; labels only for ``eval``), :mod:`.scoring`,
:mod:`.programs` (safe arithmetic for self-derived references), :mod:`.knowledge` (the versioned
knowledge base), :mod:`.retrieval` (BM25 over a docs folder, ``rank-bm25``), :mod:`.prompts`
(meta-prompts and strict reply parsers), :mod:`.harness` (ledger views per purpose, budget
estimate, execution and judging shared by every optimiser), :mod:`.mrpea` (the MR.PEA loop),
:mod:`.baselines` (SPO-style, APE-style, none), :mod:`.simulator` (the SIMULATED target model and
the scripted optimiser of ``--demo``), :mod:`.report`.
"""
