"""Suite-wide settings: nothing a test does may read or change the user's own files."""

from __future__ import annotations

import os
import tempfile


def pytest_configure(config):
    # The trust store of odyssey_env.trust lives in the user's config folder: tests get their own.
    os.environ["ODYSSEY_TRUST_FILE"] = os.path.join(tempfile.mkdtemp(prefix="odyssey-trust-"), "trusted.json")
    # So is the user games directory (imported and generated games found by name): tests start with none.
    os.environ["ODYSSEY_GAMES_DIR"] = tempfile.mkdtemp(prefix="odyssey-games-")
