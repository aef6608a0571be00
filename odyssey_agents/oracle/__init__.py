"""The oracle: a privileged planner agent that proves every shipped game solvable.

``agent.py`` holds the :class:`OracleAgent` face (goals, progress watch, validity check);
``planner.py`` decides a step from the parts in ``goals.py`` (quest conditions), ``navigation.py``
(routes and locks), ``supply.py`` (getting and carrying things), ``tactics.py`` (choosing and
preparing fights) and ``combat.py`` (exact fight simulation); ``view.py`` indexes the true state they
read; ``solve.py`` plays whole episodes (``python -m odyssey_agents.oracle``).
"""

from odyssey_agents.oracle.agent import OracleAgent, current_goals, is_valid

__all__ = ["OracleAgent", "current_goals", "is_valid"]
