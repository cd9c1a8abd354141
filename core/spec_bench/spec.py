"""The choices and defaults of ``mlx26 spec-bench`` (standard library only; the CLI imports this at module level)."""

ENGINES = ("ours", "hf-assisted", "prompt-lookup")
SELECTORS = ("greedy", "farthest")  # greedy min-summed-similarity | farthest-point
EMBEDDERS = ("auto", "minilm", "tfidf")
TIERS = ("low", "mixed", "high", "random")  # entropy tiers + the synthetic random-token variant
EMBEDDED = "embedded"  # the prompt-pool name of the embedded default
DEFAULT_LENGTHS = (128, 256, 512)  # fit the zoo's 1024 positions with room to generate (tiny-llama-1k trained on them)
PAPER_LENGTHS = (1024, 2048, 4096, 8192, 16384, 32768)  # configuration only on the tiny models
DEFAULT_CONCURRENCY = (1, 2, 4, 8, 16)
NGRAM_MAX = 3  # prompt lookup: longest n-gram matched
# vLLM's spec-decode counter names (Prometheus appends _total to counters when exposed).
VLLM_ACCEPTED = "vllm:spec_decode_num_accepted_tokens"
VLLM_DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
VLLM_DRAFTS = "vllm:spec_decode_num_drafts"
VLLM_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"
