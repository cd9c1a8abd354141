"""MODEL_CARD.md for a trained zoo model, rendered from its manifest (no paper reconstructed)."""

from __future__ import annotations

from typing import Any


def _budget(tr: dict[str, Any]) -> str:
    if tr.get("fixed_steps"):
        return f"Fixed step count {tr['fixed_steps']}"
    return f"Budget {tr['minutes_budget']} min of {tr.get('budget_clock', 'wall')} time"


def _origin(m: dict[str, Any]) -> str:
    up = m.get("upcycled_from")
    if up:
        return (f"A small causal language model sparse-upcycled from the zoo's `{up['model']}` ({up['method']}, "
                f"jitter {up['noise']}),\nthen trained by mlx26's own training loop (`mlx26 zoo train`) on text every "
                "machine has.")
    cont = m.get("continued_from")
    if cont:
        return (f"A small causal language model: the zoo's `{cont['model']}`, trained on by mlx26's own training loop\n"
                f"(`mlx26 zoo train`; {cont['method']}) on text every machine has.")
    return ("A small causal language model trained from scratch by mlx26's own training loop\n"
            "(`mlx26 zoo train`) on text every machine has.")


def model_card(m: dict[str, Any]) -> str:
    ev, tr = m["eval"], m["training"]
    rows = [(m["name"] + " (this model)", ev["bits_per_byte"])] + list(ev["baselines"].items())
    table = "\n".join(f"| {name} | {bpb:.4f} |" for name, bpb in rows)
    corpora = "\n".join(f"- `{c['id']}` {c['split']}: {c['bytes_used']:,} of {c['bytes']:,} bytes used, "
                        f"{c['tokens']:,} tokens, {c['hash']} (Python {c['python']})" for c in m["corpora"])
    load = ""
    if "expert_load" in ev:
        load = ("\nExpert load on the held-out text (top-k picks per expert, one list per layer): "
                f"`{ev['expert_load']}`; dead experts: {ev['dead_experts']}.\n")
    return f"""# {m['name']}

{m['description']}.

{_origin(m)} It is a tiny research model:
useful as a real, honest model for tests, benchmarks and demos; not a capable assistant.

- Architecture: `{m['architecture']}` ({m['parameters']:,} parameters), config `{m['config']}`
- Tokenizer: `{m['tokenizer']['name']}` (vocab {m['tokenizer']['vocab_size']}, {m['tokenizer']['hash']})
- Trained with: `{tr['command']}`
- Seed {tr['seed']}, {tr['steps']:,} steps, {tr['tokens_seen']:,} tokens seen (batch {tr['batch_size']} × context
  {tr['context']}), peak lr {tr['lr']}, {tr['optimizer']}, {tr['schedule']}
- {_budget(tr)}; took {tr.get('cpu_time_s', '?')} s CPU, {tr['wall_time_s']} s wall, on
  {tr['torch_threads']} torch thread(s) ({tr['cpu_count']} cores; wall > CPU means other jobs shared the cores)

## Training data
{corpora}

## Held-out bits per byte
`{ev['corpus']}` held-out split, first {ev['bytes']:,} bytes ({ev['text_hash']}), context {ev['context']}:

| model / compressor | bits/byte |
| --- | --- |
{table}
{load}
Rebuild: run the command above. With a time budget the step count follows the speed of the
machine (CPU time by default, so other jobs on the machine matter little); bits/byte land
within a few percent on a similar CPU. Versions: {', '.join(f'{k} {v}' for k, v in m['versions'].items())}.
"""
