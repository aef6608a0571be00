"""Quests as data: the main quest, side quests, the tutorial and online expansion."""
