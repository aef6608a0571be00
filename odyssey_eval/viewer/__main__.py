"""``python -m odyssey_eval.viewer RUN_DIR``: the same as ``odyssey view RUN_DIR``."""

import sys

from odyssey_agents.errors import OdysseyError
from odyssey_eval.viewer.cli import main

try:
    sys.exit(main())
except OdysseyError as exc:
    print(f"odyssey view: {exc}", file=sys.stderr)
    sys.exit(2)
