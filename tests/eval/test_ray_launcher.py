"""``odyssey run -m ... launcher=ray`` on a real Ray cluster on this machine (127.0.0.1 only).

These need the ``ray`` extra, which is kept out of ``dev`` (see docs/evaluation.md, Launchers): the main
suite skips them, saying so, where Ray is not installed; CI runs them in a virtual environment of their
own (``bash .ci/ray``, which sets ``ODYSSEY_TEST_RAY=required`` so that a missing Ray fails instead).
The cluster is started here with ``ray start --head --block`` on free loopback ports and stopped when
the module ends, or is one already running on this machine: ``ODYSSEY_TEST_RAY_ADDRESS=127.0.0.1:PORT``
(and ``ODYSSEY_TEST_RAY_CLIENT_PORT`` for the Ray Client test).

Every sweep here is compared with the same cells played by ``launcher=basic``: the run directories'
trajectories, QA answers and results must be equal apart from wall-clock fields.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

if os.environ.get("ODYSSEY_TEST_RAY") == "required":
    import ray  # noqa: F401  (.ci/ray installed the extra: a missing Ray is a failure there, not a skip)
else:
    pytest.importorskip(
        "ray",
        reason='the ray extra is not installed (pip install "odyssey-gym[ray]"); CI runs '
        "these tests in a virtual environment of their own: bash .ci/ray",
    )

from .conftest import lines
from .test_runner import scrub

pytestmark = pytest.mark.ray

SMALL = ["max_steps=15", "eval.qa.world_knowledge=2", "eval.qa.episodic=1", "eval.progress=false"]
#: long enough to be killed in the middle (a random agent plays thousands of steps a second)
LONG = [
    "game=mossfall",
    "max_steps=6000",
    "eval.qa.enabled=false",
    "eval.progress=false",
    "eval.checkpoint_every=500",
    "eval.checkpoint_min_seconds=0",
]
#: Ray on loopback only, no token file in the user's home, no usage report
RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


class Cluster:
    def __init__(self, address: str, client_port: int | None, env: dict[str, str]):
        self.address, self.client_port, self.env = address, client_port, env

    def odyssey(self, *args: str, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "odyssey_eval.cli", *args],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def sweep(self, *args: str, cwd: Path, address: str | None = None, **kw) -> subprocess.CompletedProcess:
        return self.odyssey(
            "run", "-m", *args, "launcher=ray", f"hydra.launcher.address={address or self.address}", cwd=cwd, **kw
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    env = {**os.environ, **RAY_ENV, "HF_HUB_OFFLINE": "1"}
    given = os.environ.get("ODYSSEY_TEST_RAY_ADDRESS")
    if given:  # a cluster the user started on this machine, and stops
        port = os.environ.get("ODYSSEY_TEST_RAY_CLIENT_PORT")
        yield Cluster(given, int(port) if port else None, env)
        return
    # Ray's socket paths must stay short: a temp dir of its own right under /tmp
    env["RAY_TMPDIR"] = tempfile.mkdtemp(prefix="oray", dir="/tmp")
    port, client_port = _free_port(), _free_port()
    log = Path(env["RAY_TMPDIR"]) / "head.log"
    with open(log, "w") as out:
        # `ray` as this interpreter's module: its script need not be on PATH (a venv not activated)
        head = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ray.scripts.scripts",
                "start",
                "--head",
                "--block",
                "--node-ip-address",
                "127.0.0.1",
                "--port",
                str(port),
                "--ray-client-server-port",
                str(client_port),
                "--include-dashboard=false",
                "--num-cpus",
                "2",
                "--disable-usage-stats",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 180
        while "Ray runtime started" not in log.read_text():
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ray start --head did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield Cluster(f"127.0.0.1:{port}", client_port, env)
    finally:
        head.terminate()  # --block: the command stops the processes it started
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        shutil.rmtree(env["RAY_TMPDIR"], ignore_errors=True)


def _content(run: Path) -> dict:
    """What a run directory holds, less its wall-clock fields (the only things equal runs may differ in)."""
    results = json.loads((run / "results.json").read_text())
    results.pop("run_dir", None)
    content = {"results": scrub(results), "trajectory": scrub(lines(run / "trajectory.jsonl"))}
    if (run / "qa_questions.json").exists():
        content["questions"] = json.loads((run / "qa_questions.json").read_text())
        content["qa"] = scrub(lines(run / "qa.jsonl"))
    return content


def _cells(root: Path) -> dict[str, dict]:
    return {str(p.parent.relative_to(root)): _content(p.parent) for p in sorted(root.rglob("results.json"))}


def _basic(cluster: Cluster, cwd: Path, *args: str) -> dict[str, dict]:
    done = cluster.odyssey("run", "-m", *args, "eval.output_dir=basic", cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return _cells(cwd / "basic")


def _failure_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("odyssey run: cell ")]


def test_a_sweep_on_the_cluster_equals_the_basic_launcher(cluster, tmp_path):
    args = ["agent=random,oracle", "game=mossfall,quiet_bell", "seed=0,1", *SMALL]
    done = cluster.sweep(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Ray launcher: 8 cells on the Ray cluster" in done.stdout
    on_ray = _cells(tmp_path / "runs")  # relative to where the command ran, not to where Ray was started
    assert len(on_ray) == 8
    assert on_ray == _basic(cluster, tmp_path, *args)


def test_a_ray_started_for_the_sweep(cluster, tmp_path):
    """The default, ``address=local``: Ray is started on 127.0.0.1 for the sweep and stopped after it."""
    args = ["game=tallowmere", "seed=0,1", *SMALL]
    env = {k: v for k, v in cluster.env.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}  # the launcher sets it
    done = subprocess.run(
        [sys.executable, "-m", "odyssey_eval.cli", "run", "-m", *args, "launcher=ray"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "a Ray started for this sweep" in done.stdout
    assert _cells(tmp_path / "runs") == _basic(cluster, tmp_path, *args)


def test_ray_client(cluster, tmp_path):
    if cluster.client_port is None:
        pytest.skip("the cluster has no Ray Client server port")
    args = ["game=mossfall", "seed=3", *SMALL]
    done = cluster.sweep(*args, cwd=tmp_path, address=f"ray://127.0.0.1:{cluster.client_port}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert _cells(tmp_path / "runs") == _basic(cluster, tmp_path, *args)


def test_a_cell_run_by_another_process_is_refused_in_one_line(cluster, tmp_path):
    """Cell locks hold across Ray workers: the cell another process is running is refused at once, in
    one line naming the holder; the other cells run; the same command later completes the sweep."""
    args = ["game=mossfall", "seed=0,1", *SMALL]
    busy = tmp_path / "runs" / "mossfall" / "random" / "none" / "seed_1"
    busy.mkdir(parents=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import fcntl, os, sys\n"
                f"fd = os.open({str(busy / '.lock')!r}, os.O_RDWR | os.O_CREAT)\n"
                "fcntl.flock(fd, fcntl.LOCK_EX)\nos.write(fd, f'{os.getpid()}\\n'.encode())\n"
                "print('locked', flush=True)\nsys.stdin.read()\n"
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        done = cluster.sweep(*args, cwd=tmp_path)
    finally:
        holder.communicate("", timeout=30)
    assert done.returncode == 2
    lines = _failure_lines(done.stderr)
    assert len(lines) == 1 and "seed=1" in lines[0], done.stderr[-3000:]
    assert f"is being run by another process (pid {holder.pid})" in lines[0]
    assert "Traceback" not in done.stderr
    assert (busy.parent / "seed_0" / "results.json").is_file() and not (busy / "results.json").exists()
    again = cluster.sweep(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert _cells(tmp_path / "runs") == _basic(cluster, tmp_path, *args)


def _kill_a_worker_mid_run(cluster: Cluster, cwd: Path, *extra: str) -> tuple[subprocess.CompletedProcess, bytes]:
    """Sweep seeds 0 and 1 of ``LONG``; SIGKILL the Ray worker playing seed 0 after its first checkpoints.
    Returns the sweep's outcome and seed 0's trajectory as the kill left it."""
    trajectory = cwd / "runs" / "mossfall" / "random" / "none" / "seed_0" / "trajectory.jsonl"
    latest = trajectory.parent / "checkpoints" / "LATEST"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "odyssey_eval.cli",
            "run",
            "-m",
            *LONG,
            "seed=0,1",
            "launcher=ray",
            f"hydra.launcher.address={cluster.address}",
            *extra,
        ],
        cwd=cwd,
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed_at = b""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if latest.exists() and latest.read_text().strip() >= "step_001000":
            worker = int((trajectory.parent / ".lock").read_text())
            assert _holds_lock(trajectory.parent / ".lock"), "the cell's lock is not held while it runs"
            os.kill(worker, signal.SIGKILL)
            killed_at = trajectory.read_bytes()
            break
        time.sleep(0.01)
    out, err = proc.communicate(timeout=300)
    assert killed_at, "the cell finished before it could be killed:\n" + err[-3000:]
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), killed_at


def _holds_lock(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _resumed(before: bytes, after: bytes) -> bool:
    """A resumed run keeps every line up to its checkpoint byte for byte (wall-clock fields included);
    one started over would have rewritten them."""
    lines = before.split(b"\n")
    kept = b"\n".join(lines[: len(lines) // 2])  # the checkpoint is past the first half of what was written
    return len(kept) > 1000 and after.startswith(kept)


def test_a_killed_worker_fails_its_cell_and_the_command_resumes_it(cluster, tmp_path):
    done, killed_at = _kill_a_worker_mid_run(cluster, tmp_path)
    assert done.returncode == 2
    lines = _failure_lines(done.stderr)
    assert len(lines) == 1 and "seed=0" in lines[0] and "the Ray worker running it died" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    runs = tmp_path / "runs" / "mossfall" / "random" / "none"
    assert (runs / "seed_1" / "results.json").is_file() and not (runs / "seed_0" / "results.json").exists()
    again = cluster.sweep(*LONG, "seed=0,1", cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert _resumed(killed_at, (runs / "seed_0" / "trajectory.jsonl").read_bytes())
    assert _cells(tmp_path / "runs") == _basic(cluster, tmp_path, *LONG, "seed=0,1")


def test_max_retries_resumes_a_killed_cell_within_the_sweep(cluster, tmp_path):
    done, killed_at = _kill_a_worker_mid_run(cluster, tmp_path, "hydra.launcher.max_retries=1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert not _failure_lines(done.stderr)
    trajectory = tmp_path / "runs" / "mossfall" / "random" / "none" / "seed_0" / "trajectory.jsonl"
    assert _resumed(killed_at, trajectory.read_bytes())
    assert _cells(tmp_path / "runs") == _basic(cluster, tmp_path, *LONG, "seed=0,1")


def test_a_failing_cell_is_one_line_from_the_driver(cluster, tmp_path):
    done = cluster.sweep("game.name=mossfall,no_such_game", *SMALL, cwd=tmp_path)
    assert done.returncode == 2
    lines = _failure_lines(done.stderr)
    assert len(lines) == 1 and "no_such_game" in lines[0] and "not a shipped game" in lines[0], done.stderr
    # printed by the driver before the sweep's last line (a worker's own output may arrive after it)
    assert done.stderr.index(lines[0]) < done.stderr.index("the sweep did not complete")
    assert (tmp_path / "runs" / "mossfall" / "random" / "none" / "seed_0" / "results.json").is_file()


def test_an_unreachable_cluster_is_one_line(cluster, tmp_path):
    done = cluster.sweep("game=mossfall", *SMALL, cwd=tmp_path, address=f"ray://127.0.0.1:{_free_port()}", timeout=300)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("odyssey run: launcher=ray: cannot connect to Ray")
    assert "Traceback" not in done.stderr


def test_ctrl_c_stops_the_running_cells_at_a_checkpoint(cluster, tmp_path):
    """Ctrl-C in the driver reaches the cells as a Ctrl-C (``ray.cancel``): each stops as an interrupted
    run does, at its last checkpoint, its lock released, and the command says how to resume."""
    latest = tmp_path / "runs" / "mossfall" / "random" / "none" / "seed_0" / "checkpoints" / "LATEST"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "odyssey_eval.cli",
            "run",
            "-m",
            *LONG,
            "max_steps=200000",
            "seed=0,1",
            "launcher=ray",
            f"hydra.launcher.address={cluster.address}",
        ],
        cwd=tmp_path,
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 180
    while not latest.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-3000:]
    assert "odyssey run: interrupted; the cells that were running stopped at their last checkpoint" in err
    assert "Traceback" not in err
    cell = latest.parent.parent
    assert not (cell / "results.json").exists()
    assert not _holds_lock(cell / ".lock"), "the cell still runs after the command stopped"
    assert latest.read_text().strip() >= "step_000500"
