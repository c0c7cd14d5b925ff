"""The SIGKILL harness shared by every crash test.

A crash test starts a child process (a checkpointing loop, or the ``luminamoon-data run`` CLI),
SIGKILLs it at a random moment - during interpreter start-up and imports, while it opens its
state, inside a commit - then checks what is on disk, and starts the next child from there. This
module holds that loop once:

* :func:`spawn_and_kill` starts one child and kills it after a random delay, counted from the
  spawn or from the child's ``ready`` line;
* :func:`kill_chain` repeats kill + verify ``kills`` times on one backend, or alternating the
  backends (``chain="mixed"``), and checks that no commit is ever lost;
* :func:`kill_count` reads the strength knob (``LUMINAMOON_CRASH_KILLS`` and friends);
* :func:`resume_chain` kills a training loop that streams batches (or steps) and logs them, run
  after run, checks every run against an uninterrupted reference and that the committed runs
  concatenated are that reference.

Used by ``test_crash_safety.py`` (checkpoint + exact dedup), ``test_minhash_crash.py`` (MinHash
companion file), ``test_run_crash.py`` (the CLI main job), ``test_stream_crash.py``
(ResumablePipeline) and ``test_torch_stream_crash.py`` (torch StatefulDataLoader).
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


def read_step_log(path: Path) -> list[tuple[str, int, str]]:
    """A training child's log: ``Y <n> <what>`` per batch received, ``C <n>`` per commit, ``D <n>``
    at the end, as ``(kind, n, what)`` (complete lines only)."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="ascii").split("\n")[:-1]  # drop a torn tail
    out = []
    for line in lines:
        kind, rest = line[0], line[2:]
        number, _, what = rest.partition(" ")
        out.append((kind, int(number), what))
    return out


@dataclass(frozen=True)
class StartupKill:
    """The start-up kill window of :func:`resume_chain`: uniform in [min_delay, max_delay] s."""

    min_delay: float
    max_delay: float


def resume_chain(
    *,
    reference: Sequence[str],
    first: int,
    run_argv: Callable[[Path], list[str]],
    committed_in: Callable[[], int],
    backend: str,
    rng: random.Random,
    kills: int,
    startup: StartupKill,
    workdir: Path,
    label: object,
    prefix: str = "",
    extra_kills: int = 0,
) -> int:
    """Kill a training child ``kills`` times, let a last one finish; returns how many runs
    resumed from a commit.

    A child (``run_argv(log)``) streams items numbered ``first``, ``first + 1``, ... (``reference[n
    - first]`` is item n of the uninterrupted run), logs them (:func:`read_step_log`), commits
    now and then and writes ``committed`` to stderr. Odd runs are killed during start-up and the
    resume itself with probability 0.6 (``startup``, timed from the spawn); the others within 40
    ms after their 1st or 2nd commit: training, prefetching, between the optimizer step and the
    commit, inside the commit. ``committed_in()`` reads the committed item from the checkpoint
    (``first - 1`` when none). With ``extra_kills`` the kills go on, up to that many more, until
    three runs resumed from a commit (a loaded box can make start-up kills land before any
    commit). After every run:

    * every item received is the reference item of its number, starting right after the
      committed one;
    * the committed item never goes back, covers every commit the child logged, and never
      names an item the child did not reach.

    At the end the committed items of all runs, concatenated, are the reference. Child logs and
    stderr go to ``workdir/<prefix>run<i>.log`` and ``.err``; ``label`` names the case in failures.
    """
    none = first - 1
    committed = none
    consumed: list[tuple[int, str]] = []  # committed items of every run, in order
    resumed_from_commit = 0
    runs = 0
    finished = False
    while not finished:
        log = workdir / f"{prefix}run{runs}.log"
        err = workdir / f"{prefix}run{runs}.err"
        argv = run_argv(log)
        resumed_from_commit += committed > none
        enough = resumed_from_commit >= min(3, kills)
        if (runs >= kills and enough) or runs >= kills + extra_kills:
            done = subprocess.run(
                argv, check=False, capture_output=True, env=child_env(backend), timeout=120
            )
            assert done.returncode == 0, done.stderr.decode(errors="replace")
        elif runs % 2 == 1 and rng.random() < 0.6:
            # During start-up or the resume itself (imports, opening the checkpoint, seeking,
            # the first prefetch), or a little later.
            spawn_and_kill(
                argv,
                backend=backend,
                stderr_path=err,
                rng=rng,
                max_delay=startup.max_delay,
                min_delay=startup.min_delay,
                ready_line=False,
                may_finish=True,
            )
        else:
            # After the n-th commit of this run, at a random point of the following steps.
            spawn_and_kill(
                argv,
                backend=backend,
                stderr_path=err,
                rng=rng,
                max_delay=0.04,
                after_stderr=(b"committed", rng.randint(1, 2)),
                may_finish=True,
            )
        entries = read_step_log(log)
        yielded = [(n, what) for kind, n, what in entries if kind == "Y"]
        logged_commits = [n for kind, n, _ in entries if kind == "C"]
        finished = any(kind == "D" for kind, _, _ in entries)
        assert [n for n, _ in yielded] == list(
            range(committed + 1, committed + 1 + len(yielded))
        ), (label, runs)
        for n, what in yielded:
            assert what == reference[n - first], (label, runs, n)
        now = committed_in()
        assert now >= committed, "a commit was lost"
        assert now >= max(logged_commits, default=none), "a logged commit is not in the checkpoint"
        # A commit that landed for an item the log did not reach would be a phantom commit.
        assert now <= max((n for n, _ in yielded), default=committed), "phantom commit"
        consumed += [(n, what) for n, what in yielded if n <= now]
        committed = now
        runs += 1
    assert consumed == list(enumerate(reference, start=first))
    assert committed == len(reference) - 1 + first
    return resumed_from_commit
