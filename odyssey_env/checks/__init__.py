"""Validation of game data beyond its schema, apart from the data it checks: the world, then the quest."""
