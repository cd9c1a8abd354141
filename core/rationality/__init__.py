"""Rationality measures for RL agents (Qian, Storkey & He, "Rationality measures for reinforcement
learning agents", ICML 2026, arXiv 2602.04737; upstream code EVIEHub/Rationality, not used here).

A reconstruction from the paper's definitions, computed *exactly* on tabular MDPs read from
gymnasium's own transition tables (``env.unwrapped.P``):

* :mod:`.mdp` — the tabular MDP, the slip shift ``P_eps = (1-eps) P + eps * mean_a P`` and the
  finite-horizon optimal values ``Q*_t`` of the (hidden) deployment kernel by backward induction;
* :mod:`.risk` — rational action sets, expected rational risk by exact propagation of the state
  distribution, empirical rational risk on training trajectories and the extrinsic/intrinsic gap;
* :mod:`.bounds` — 1-Wasserstein terms (closed form for the slip family, POT's ``ot.emd2``
  otherwise), the Lipschitz-weighted extrinsic bound and Rademacher complexity proxies;
* :mod:`.sweep` — hypothesis sweeps (regulariser x seed, domain randomisation x seed, shift size)
  with bootstrap CIs; the agents come from a ``train_fn`` the caller supplies (the CLI uses
  ``mlx26 train rl``'s DQN), so this package does not import ``mlx26.core.rl``.

Reconstructed (not taken from upstream code): the exact finite-horizon form of the risk, the split
of the gap into a kernel/initial-state shift part (extrinsic) and a finite-sample part (intrinsic),
and the computable bound proxies; see docs/rationality.md. This ``__init__`` imports nothing heavy
(``spec`` is imported by ``mlx26 --help``).
"""
