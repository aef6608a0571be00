"""``python -m odyssey_agents.oracle <game>... [--seeds 0-9] [--budget 500]``: the solvability table."""

import sys

from odyssey_agents.oracle.solve import main

sys.exit(main())
