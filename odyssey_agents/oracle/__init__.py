"""The oracle: a privileged planner agent that proves every shipped game solvable.

``agent.py`` holds the :class:`OracleAgent` face (goals, progress watch, validity check),
``planner.py`` the goal decomposition, ``combat.py`` fight forecasts and tactics, and ``view.py`` the
per-step index of the true state they read.
"""

from odyssey_agents.oracle.agent import OracleAgent, current_goals, is_valid

__all__ = ["OracleAgent", "current_goals", "is_valid"]
