"""``odyssey view RUN_DIR``: a run's trajectory as one self-contained, interactive HTML file.

    odyssey view runs/mossfall/random/none/seed_0                 # writes runs/mossfall/random/none/seed_0/view.html
    odyssey view runs/mossfall/multi/oracle--random/none/seed_0 -o /tmp/cell.html
    odyssey view RUN_DIR --serve                              # also serve it on 127.0.0.1 (reload: fresh data)

The page shows the world graph of areas with the agent's path, a timeline and step slider, each step's
observation, reasoning, action, feedback, reward breakdown, inventory and stats, the quest's progress,
the QA rounds, the action-dependency graph when the run saved one, and filters (invalid actions,
deaths, quest stages, rewards, a verb, a text search); a multi-agent cell has an agent selector. It
needs no network and no server, and reading the run executes nothing from it (see
:mod:`odyssey_eval.viewer.data`).
"""

from odyssey_eval.viewer.build import PAGE, build_page, default_output, write_view, write_views
from odyssey_eval.viewer.cli import main
from odyssey_eval.viewer.data import ViewError, view_data

__all__ = ["PAGE", "ViewError", "build_page", "default_output", "main", "view_data", "write_view", "write_views"]
