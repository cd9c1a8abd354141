"""Auditing LLM-as-a-judge reliability (a reconstruction of Schwinn et al., "A Coin Flip for Safety:
LLM Judges Fail to Reliably Measure Adversarial Robustness", ICML 2026, arXiv 2603.06594; upstream
repository SchwinnL/LLMJudgeReliability holds the paper and the released label tables, no code).

Reconstructed from the paper's definitions (no upstream code exists to follow):

* :mod:`.table` — a labelled audit table: human labels (binary, 1–5 or 0–1 scale), judge scores,
  slice columns; column mapping, scale checks, missing judge cells dropped per judge;
  class-balanced subsampling per cell (the paper's balanced attack × model cells);
* :mod:`.metrics` — per-slice judge metrics (accuracy, balanced accuracy, precision, recall, FPR,
  FNR, F1, Cohen's κ, MCC, AUROC) with seeded bootstrap 95% CIs;
* :mod:`.analyses` — judge vs human ASR and precision-corrected ASR, Judge Concordance
  (1 − H₂ of the harmful-vote fraction), ReliableBench (behaviours by mean judge accuracy, top k)
  and JudgeStressTest (items at most one judge gets right) with its leave-one-out Acc@0/Acc@1;
* :mod:`.judges` — judges runnable here: refusal-prefix matching, TF-IDF + logistic regression
  (scikit-learn, out-of-fold) and LLM judges in three prompt formats (StrongREJECT rubric,
  HarmBench yes/no classifier, Llama-Guard) through ``mlx26.core.llm``, with strict verdict parsing;
* :mod:`.simulate` — a SIMULATED audit table with injected shifts (no harmful text), the
  embedded default, so every analysis runs offline and tests can check that shifts are recovered.

What is ours, not the paper's: the bootstrap CI scheme, the hypergeometric P(≥1 truly harmful | N
judge positives), the simulator and its placeholder texts, and the default human threshold
(≥ 3 on 1–5, ≥ 0.5 on 0–1). This ``__init__`` imports nothing heavy (``spec`` is read by --help).
"""
