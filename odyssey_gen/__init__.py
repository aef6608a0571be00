"""odyssey_gen: game generation (offline procedural author, LLM program synthesis) and validation."""
