"""pytest-infx: LLM-inference benchmarks as pytest items."""
