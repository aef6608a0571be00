"""Missing-extra messages name the command that works for this installation, in one line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from odyssey_env import extras
from odyssey_env.extras import MissingExtra, install_command, missing_extra

ROOT = Path(__file__).resolve().parents[2]


class FakeDist:
    def __init__(self, direct_url):
        self.direct_url = direct_url

    def read_text(self, name):
        assert name == "direct_url.json"
        return None if self.direct_url is None else json.dumps(self.direct_url)


@pytest.fixture
def installed(monkeypatch):
    """Pretend odyssey-gym was installed as ``dists`` say (each a direct_url.json, or None)."""

    def install(*direct_urls, root=ROOT):
        extras._origin.cache_clear()
        monkeypatch.setattr(extras.metadata, "distributions", lambda name: [FakeDist(d) for d in direct_urls])
        monkeypatch.setattr(extras, "_ROOT", root)

    yield install
    extras._origin.cache_clear()


def test_from_an_index_the_package_form(installed, tmp_path):
    installed(None, root=tmp_path)  # no pip record, no checkout around the code: a wheel from an index
    assert install_command("rag") == 'pip install "odyssey-gym[rag]"'


def test_an_editable_clone_in_the_current_directory(installed, tmp_path, monkeypatch):
    clone = tmp_path / "odyssey"
    clone.mkdir()
    installed({"url": clone.as_uri(), "dir_info": {"editable": True}})
    monkeypatch.chdir(clone)
    assert install_command("rag") == 'pip install -e ".[rag]"'
    monkeypatch.chdir(tmp_path)  # elsewhere: the clone's path, which works from anywhere
    assert install_command("rag") == f'pip install -e "{clone}[rag]"'


def test_the_clone_own_egg_info_without_a_record_is_passed_over(installed, tmp_path, monkeypatch):
    """Run from the clone, setuptools' ``odyssey_gym.egg-info`` there comes first on sys.path."""
    installed(None, {"url": tmp_path.as_uri(), "dir_info": {"editable": True}})
    monkeypatch.chdir(tmp_path)
    assert install_command("multiagent") == 'pip install -e ".[multiagent]"'


def test_a_source_tree_pip_never_installed(installed, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    installed(root=tmp_path)
    monkeypatch.chdir(tmp_path)
    assert install_command("eval") == 'pip install -e ".[eval]"'


def test_a_folder_a_wheel_file_and_git(installed, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    installed({"url": (tmp_path / "src").as_uri(), "dir_info": {}})
    assert install_command("rag") == f'pip install "{tmp_path / "src"}[rag]"'
    wheel = (tmp_path / "odyssey_gym-0.1.0-py3-none-any.whl").as_uri()
    installed({"url": wheel, "archive_info": {}})
    assert install_command("rag") == f'pip install "odyssey-gym[rag] @ {wheel}"'
    installed({"url": "https://github.com/o/odyssey.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}})
    assert install_command("rag") == 'pip install "odyssey-gym[rag] @ git+https://github.com/o/odyssey.git@abc123"'


def test_a_damaged_record_reads_as_none(installed, tmp_path):
    installed({"dir_info": {"editable": True}}, root=tmp_path)  # no url
    assert install_command("rag") == 'pip install "odyssey-gym[rag]"'


def test_missing_extra_is_a_module_not_found_error_with_the_module_name():
    exc = missing_extra("the SB3 adapter", "sb3", "stable_baselines3")
    assert isinstance(exc, ModuleNotFoundError) and exc.name == "stable_baselines3"
    assert str(exc) == f'the SB3 adapter needs the "sb3" extra: {install_command("sb3")}'


def test_the_agents_missing_extra_is_both_families():
    from odyssey_agents.errors import is_user_error
    from odyssey_agents.llm.protocol import MissingExtra as AgentsMissingExtra
    from odyssey_agents.llm.protocol import require

    with pytest.raises(AgentsMissingExtra) as info:
        require("no_such_module_xyz", "llm")
    assert isinstance(info.value, MissingExtra) and is_user_error(info.value)
    assert str(info.value).endswith(install_command("llm"))


def test_the_readme_pettingzoo_snippet_without_the_extra_is_one_line(tmp_path):
    """An uncaught missing extra in a plain script: its message, no traceback; other errors keep theirs."""
    script = tmp_path / "snippet.py"
    script.write_text(
        textwrap.dedent("""
            import sys
            sys.modules["pettingzoo"] = None  # as if the extra were not installed
            import odyssey_env

            env = odyssey_env.parallel_env("quiet_bell", agents=3)
        """)
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f'MissingExtra: the PettingZoo face needs the "multiagent" extra: {install_command("multiagent")}'
    ]
    assert 'pip install -e ".[multiagent]"' in done.stderr or "odyssey-gym[multiagent]" in done.stderr
    other = tmp_path / "other.py"
    other.write_text("from odyssey_env.extras import missing_extra\nmissing_extra('x', 'y')\nraise KeyError('k')\n")
    done = subprocess.run([sys.executable, str(other)], capture_output=True, text=True, timeout=60)
    assert "Traceback" in done.stderr and "KeyError: 'k'" in done.stderr  # only missing extras are shortened


def test_the_cli_reports_an_env_missing_extra_as_a_user_error():
    from odyssey_agents.errors import is_user_error

    assert is_user_error(missing_extra("the SB3 adapter", "sb3", "stable_baselines3"))
    assert not is_user_error(ModuleNotFoundError("No module named 'x'", name="x"))
