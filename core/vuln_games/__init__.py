"""Vulnerability games: capability-seeking RL in environments with implicit loopholes.

Paper: *Capability-Oriented Training Induced Alignment Risk* (ICML 2026, arXiv 2602.12124); public code
YujunZhou/Capability-seeking-RL-risk (verl). That code was not read here: the four games, their reward rules,
the trainers and the auditor are reconstructed from the paper's description as restated in the project's
issue #38, at a scale that trains on a CPU in seconds (docs/vuln-games.md says what is ours).

* :mod:`.games` — context-conditional compliance, audited self-grading, proxy-metric gaming and reward
  tampering, each vulnerable and secure, with ITP (intended task performance) and ER (exploit rate)
  computed exactly from a policy's action probabilities; every (context, action) renders to a text
  transcript that the auditor scores identically;
* :mod:`.text` — ROUGE-L and BLEU (our implementations, checked against hand-computed values);
* :mod:`.train` — token-action softmax policies trained with GRPO (group-std normalisation, no KL) and
  REINFORCE (mean baseline); :mod:`.persist` — RL-native exploit vs SFT-distilled student, both continued
  under the secure reward; :mod:`.threshold` — the self-grading exploit threshold in the audit probability;
* :mod:`.audit` — the reference reward rules applied to real transcripts (JSONL per game); code runs only on
  request, in a resource-limited subprocess (:mod:`.sandbox`);
* :mod:`.lm` — tiny-llama after an SFT warm-up on game transcripts, trained with TRL's ``GRPOTrainer``.
"""
