"""Pieces shared by several cores: seeding, environment probes, model zoo, LLM backends."""
