"""The engine's step rules: processes that run every step after the actions, in priority order."""
