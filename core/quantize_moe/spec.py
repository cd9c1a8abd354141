"""The choices of ``mlx26 quantize-moe``, shared by the CLI and the core (standard library only).

``mlx26.cli.quantize_moe`` imports this at module level (``--help`` must not load torch);
:mod:`.quant`, :mod:`.lowrank` and :mod:`.cluster` import the same tuples.
"""

BITS = (2, 3, 4, 8)
BASES = ("rtn", "gptq", "hqq")
LOWRANKS = ("none", "lqer", "tileq")
CLUSTERS = ("index", "activation")
RUNTIMES = ("fp32", "int4")  # fp32: dequantized weights; int4: packed codes through torch's int4 CPU kernel
