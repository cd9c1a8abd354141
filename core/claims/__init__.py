"""The claims ledger: every paper claim, what we measured, on which data, and whether it reproduced."""
