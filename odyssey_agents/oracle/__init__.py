"""The oracle: a privileged planner agent that proves every shipped game solvable.

``agent.py`` holds the :class:`OracleAgent` face (goals, progress watch, validity check);
``planner.py`` turns the quest's conditions into a step's command, with collaborators that each have
one job: ``navigation.py`` (routes and locks), ``supply.py`` (getting and carrying things),
``tactics.py`` (choosing and preparing fights), ``events.py`` (the ``did`` predicate's events),
``foresight.py`` (what later stages want), ``opportunism.py`` (cheap steps worth taking anyway) and
``combat.py`` (exact fight simulation). ``core.py`` holds what they share (the memory kept between
steps, the focus of the step being planned); ``view.py`` indexes the true state they read;
``solve.py`` plays whole episodes (``python -m odyssey_agents.oracle``).
"""

from odyssey_agents.oracle.agent import OracleAgent, current_goals, is_valid

__all__ = ["OracleAgent", "current_goals", "is_valid"]
