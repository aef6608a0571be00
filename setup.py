"""Only what pyproject.toml cannot say: install ``odyssey-gym.pth`` beside the packages.

Gymnasium 1.x loads no plugins, so the ``.pth`` file (one line, run by ``site`` at interpreter
start-up) installs the hook of ``_odyssey_gym_hook``, which registers odyssey's ids right after
``import gymnasium``. Written into the wheel's root, for regular and editable installs alike; pip
removes it with the rest on uninstall.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH_NAME = "odyssey-gym.pth"
PTH_LINE = "import _odyssey_gym_hook; _odyssey_gym_hook.install()\n"


class BuildPyWithHook(build_py):
    def run(self) -> None:
        super().run()
        # An editable wheel is assembled from the install directory, a regular one from build_lib.
        root = self.get_finalized_command("install").install_lib if self.editable_mode else self.build_lib
        target = Path(root) / PTH_NAME
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(PTH_LINE, encoding="utf-8")
        self._pth = str(target)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        pth = getattr(self, "_pth", None)
        return [*outputs, pth] if pth and not self.editable_mode else outputs


setup(cmdclass={"build_py": BuildPyWithHook})
