"""odyssey_gen: game generation (offline procedural backend, LLM program synthesis) and validation."""
