"""Step rules that run quests."""
