"""The choices of ``mlx26 judge-audit`` (standard library only; the CLI imports this at module level)."""

HUMAN_SCALES = ("auto", "binary", "1-5", "0-1")
# Judge score scales: every score is mapped to [0, 1] before --judge-threshold applies.
JUDGE_SCALES = ("0-1", "1-5", "1-10", "0-100")
JUDGE_METHODS = ("refusal", "tfidf", "llm")
LLM_FORMATS = ("strongreject", "harmbench", "llama-guard")
PREFIX_LISTS = ("gcg", "short")
METRICS = ("accuracy", "balanced_accuracy", "precision", "recall", "fpr", "fnr", "f1", "kappa", "mcc", "auroc")
# The column names of the paper's released label tables (JudgeStressTest.csv / ReliableBench.csv in
# SchwinnL/LLMJudgeReliability): --preset coinflip maps them, so such a file reads without options.
PRESETS = {
    "coinflip": {
        "id": "Id", "human": "Human_Judgement", "human_scale": "0-1", "behavior": "Behavior_ID",
        "judges": ("LlamaGuard-3", "HarmBench", "GPT-5", "JailJudge", "AegisGuard", "StrongReject"),
        "slices": ("Attack", "Model"), "text": "Generation", "prompt": "Prompt",
    },
}
SIM_ATTACKS = ("Direct", "GCG", "PAIR", "BoN")
SIM_MODELS = ("sim-model-a", "sim-model-b", "sim-model-c")
SIM_JUDGES = ("sim-guard", "sim-classifier", "sim-rubric", "sim-keyword")
SIMULATED = "SIMULATED"
