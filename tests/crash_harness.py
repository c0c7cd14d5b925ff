"""The SIGKILL harness shared by every crash test.

A crash test starts a child process (a checkpointing loop, or the ``luminamoon-data run`` CLI),
SIGKILLs it at a random moment - during interpreter start-up and imports, while it opens its
state, inside a commit - then checks what is on disk, and starts the next child from there. This
module holds that loop once:

* :func:`spawn_and_kill` starts one child and kills it after a random delay, counted from the
  spawn or from the child's ``ready`` line;
* :func:`kill_chain` repeats kill + verify ``kills`` times on one backend, or alternating the
  backends (``chain="mixed"``), and checks that no commit is ever lost;
* :func:`kill_count` reads the strength knob (``LUMINAMOON_CRASH_KILLS`` and friends).

Used by ``test_crash_safety.py`` (checkpoint + exact dedup), ``test_minhash_crash.py`` (MinHash
companion file) and ``test_run_crash.py`` (the CLI main job).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import random
import select
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

import luminamoon.data as lmd

PACKAGE_ROOT = Path(lmd.__file__).resolve().parents[2]  # the directory holding luminamoon/


def native_available() -> bool:
    try:
        importlib.import_module("luminamoon.data._native")
    except ImportError:
        return False
    return True


NATIVE = native_available()
needs_native = pytest.mark.skipif(not NATIVE, reason="luminamoon.data._native is not built")
BACKEND_NAMES = ["native", "fallback"] if NATIVE else ["fallback"]
CHAINS = [
    pytest.param("native", marks=needs_native),
    "fallback",
    pytest.param("mixed", marks=needs_native),
]


def backend_module(name: str) -> ModuleType:
    """The backend module itself (``_native`` or ``fallbacks``), whatever ``BACKEND`` is."""
    if name == "native":
        return importlib.import_module("luminamoon.data._native")
    return importlib.import_module("luminamoon.data.fallbacks")


def load_script(path: Path, name: str) -> ModuleType:
    """A child script as a module (whatever pytest's import mode), for its schedule."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kill_count(variable: str, default: int) -> int:
    """Kills per chain: the environment variable ``variable``, else ``default``."""
    return int(os.environ.get(variable, str(default)))


def child_env(backend: str) -> dict[str, str]:
    """The environment of a child on ``backend`` that imports this very package."""
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p
    )
    env["LUMINAMOON_FORCE_FALLBACK"] = "1" if backend == "fallback" else "0"
    return env


def read_progress(progress: Path) -> list[tuple[int, int]]:
    """The ``(batch_id, epoch)`` lines a child reported (complete lines only)."""
    if not progress.exists():
        return []
    lines = progress.read_text(encoding="ascii").split("\n")[:-1]  # drop a torn tail
    return [(int(k), int(e)) for k, e in (line.split() for line in lines)]


@dataclass
class Kill:
    """How one child ended: where its delay was counted from, and its exit status."""

    where: str  # "spawn", "ready" or "stderr"
    returncode: int

    @property
    def killed(self) -> bool:
        return self.returncode == -signal.SIGKILL


def spawn_and_kill(
    argv: Sequence[str],
    *,
    backend: str,
    stderr_path: Path,
    rng: random.Random,
    max_delay: float,
    from_spawn: float = 0.3,
    ready_line: bool = True,
    may_finish: bool = False,
    min_delay: float = 0.0,
    after_stderr: tuple[bytes, int] | None = None,
) -> Kill:
    """Start ``argv`` and SIGKILL it ``uniform(min_delay, max_delay)`` seconds later.

    With ``ready_line`` the delay is counted from the child's first stdout line, except with
    probability ``from_spawn`` (kills during start-up and imports); without it, always from the
    spawn. With ``after_stderr=(text, n)`` it is counted from the n-th stderr line containing
    ``text`` (a progress line of the child; stderr is still saved to ``stderr_path``). A child that
    exits by itself fails the test unless ``may_finish``.
    """
    delay = rng.uniform(min_delay, max_delay)
    count_from_spawn = not ready_line or rng.random() < from_spawn
    if after_stderr is not None:
        return _kill_after_stderr(
            argv,
            backend=backend,
            stderr_path=stderr_path,
            delay=delay,
            trigger=after_stderr,
            may_finish=may_finish,
        )
    with stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=err, env=child_env(backend)
        )
        assert proc.stdout is not None
        try:
            if not count_from_spawn:
                ready, _, _ = select.select([proc.stdout], [], [], 60.0)
                assert ready, "the child never reported ready"
                proc.stdout.readline()
            deadline = time.monotonic() + delay
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(min(0.005, max(0.0, deadline - time.monotonic())))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            returncode = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
    if returncode != -signal.SIGKILL and not may_finish:
        pytest.fail(
            f"the {backend} child exited by itself with {returncode} instead of being killed:\n"
            + stderr_path.read_text(errors="replace")
        )
    return Kill("spawn" if count_from_spawn else "ready", returncode)


def _kill_after_stderr(
    argv: Sequence[str],
    *,
    backend: str,
    stderr_path: Path,
    delay: float,
    trigger: tuple[bytes, int],
    may_finish: bool,
) -> Kill:
    text, count = trigger
    seen = 0
    captured: list[bytes] = []
    proc = subprocess.Popen(
        list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env(backend)
    )
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            captured.append(line)
            if text in line:
                seen += 1
                if seen >= count:
                    break
        deadline = time.monotonic() + delay
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(min(0.002, max(0.0, deadline - time.monotonic())))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        returncode = proc.wait(timeout=60)
        captured.append(proc.stderr.read())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    stderr_path.write_bytes(b"".join(captured))
    if returncode != -signal.SIGKILL and not may_finish:
        pytest.fail(
            f"the {backend} child exited by itself with {returncode} instead of being killed:\n"
            + stderr_path.read_text(errors="replace")
        )
    return Kill("stderr", returncode)


@dataclass
class ChainStats:
    kills: int
    final_epoch: int
    advanced: int  # runs after which the committed epoch had moved
    startup_kills: int  # kills timed from the spawn
    seconds: float


def kill_chain(
    chain: str,
    kills: int,
    rng: random.Random,
    *,
    kill: Callable[[str, int], Kill],
    verify: Callable[[str, int], int],
) -> ChainStats:
    """``kills`` times: ``kill(backend, i)`` a child, then ``verify(checker_backend, epoch)``.

    ``chain`` is a backend name, or ``"mixed"`` to draw the child's and the checker's backend at
    random each time. ``verify`` returns the committed epoch it found; a smaller epoch than the
    previous one (a lost commit) fails the test.
    """
    epoch = 0
    advanced = 0
    startup = 0
    started = time.monotonic()
    for i in range(kills):
        backend = rng.choice(BACKEND_NAMES) if chain == "mixed" else chain
        startup += kill(backend, i).where == "spawn"
        checker = rng.choice(BACKEND_NAMES) if chain == "mixed" else chain
        new_epoch = verify(checker, epoch)
        assert new_epoch >= epoch, "a commit was lost"
        advanced += new_epoch > epoch
        epoch = new_epoch
    return ChainStats(kills, epoch, advanced, startup, time.monotonic() - started)
