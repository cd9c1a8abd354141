"""Flash-ANSR: amortised neural symbolic regression on the simplify engine (``mlx26 sr``).

Reconstruction of the SR half of Saegert & Köthe, "Breaking the Simplification Bottleneck in
Amortized Neural Symbolic Regression" (SimpliPy / Flash-ANSR, ICML 2026, arXiv 2602.08885; public
code psaegert/flash-ansr, read to understand, nothing copied; its weights and data come from a hub
and are not used). Our own code, on our simplify engine (``mlx26.core.simplify``):

* :mod:`.sampler` — Lample–Charton operator-count skeleton prior, simplification, point sampling;
* :mod:`.decontam` — the training stream decontaminated against the test sets (simplify's index);
* :mod:`.model` — IEEE-754 bit encoding, Set Transformer encoder (ISAB + PMA), prefix decoder;
* :mod:`.train` — training, the manifest, loading with a format check; shipped weights in weights/;
* :mod:`.infer` — candidate sampling, simplify + dedupe, LM constant fitting, score, Pareto front;
* :mod:`.evaluate` — numeric / symbolic recovery, length ratio; :mod:`.baselines` — pyoperon, gplearn;
* :mod:`.suites` — Nguyen-1..12 and a FastSRB-style Feynman set (formulas typed in);
* :mod:`.expr` — skeletons compiled to numpy for fast fitting.

What is reconstructed (sizes, ranges, the grammar mask, the score floor) is said in each module.
This ``__init__`` imports nothing heavy (``spec`` is imported by ``mlx26 --help``).
"""
