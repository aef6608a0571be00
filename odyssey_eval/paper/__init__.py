"""The paper's own games, imported from the user's copy of the reference release (agentodyssey 0.1.0).

``odyssey paper import`` reads the release (a wheel, an sdist or a checkout; downloaded from PyPI when not
given) as data - JSON as JSON, Python only through :mod:`ast` - and writes each of its seven games as an
odyssey game folder into the user games directory (:func:`odyssey_env.userdir.games_dir`), where
``odyssey play remnant``, ``odyssey run game=remnant`` and ``gym.make("AgentOdyssey/Remnant-v0")`` find it.
The project ships none of the paper's text: it converts the user's own download.
"""

from odyssey_eval.paper.importer import GAMES, env_id, import_game, import_release

__all__ = ["GAMES", "env_id", "import_game", "import_release"]
