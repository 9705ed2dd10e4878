"""Writing our files safely: atomic replacement with the user's umask, and one writer per results path.

:func:`atomic_write` is the one way the package replaces a file it owns (the
results file, a leaderboard artifact, the green server's files, a resumed
run's first journal): the text goes to a temporary file in the same folder,
is flushed to disk, and is renamed over the target, so a reader sees the old
file or the new one, never half of either. ``tempfile.mkstemp`` creates its
file as 0600 whatever the umask; the temporary file is given the mode a plain
``open()`` would have given (``0o666 & ~umask``) before the rename, so what we
write is as readable as every other file the user creates.

:func:`lock_results` makes a second run that writes the same results path
fail at start-up instead of silently deleting the first run's journal. The
lock is ``<results>.lock``, holding who took it (pid, host, start time); the
operating system's file lock on it is what decides, so a run killed with
SIGKILL never blocks the next one (its leftover file is taken over with a
warning naming the dead pid).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import tempfile
import time
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["ResultsLock", "atomic_write", "file_mode", "lock_path", "lock_results", "write_problem"]


@cache
def file_mode() -> int:
    """The mode ``open()`` gives a new file here: ``0o666`` less the umask (read once per process).

    The umask can only be read by setting it, which for an instant would let
    another thread create a world-writable file; Linux publishes it in
    ``/proc/self/status``, so the swap is the fallback only.
    """
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    mask = os.umask(0o077)  # the fallback: the strictest mask while we look, never a laxer one
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: str | Path, chunks: Iterable[str]) -> None:
    """Replace ``path`` by the concatenated ``chunks`` (UTF-8) through a flushed temporary file and a rename.

    On any failure (a full disk included) the temporary file is removed and
    the old file is left as it was; the ``OSError`` propagates.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            for chunk in chunks:
                stream.write(chunk)
            stream.flush()
            # On disk before the rename: after a crash the target is the old file or the whole new one.
            os.fsync(stream.fileno())
        os.chmod(temporary, file_mode())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_problem(path: str | Path, exc: OSError) -> str:
    """A one-line reason a write to ``path`` failed, naming the path (``No space left on device``...)."""
    return f"cannot write {path}: {exc.strerror or exc}"


def lock_path(results: str | Path) -> Path:
    """``pibench-results.json`` -> ``pibench-results.json.lock`` (same folder)."""
    target = Path(results)
    return target.with_name(f"{target.name}.lock")


def _try_lock(fd: int) -> bool | None:
    """Take the operating system's exclusive lock on ``fd`` without waiting.

    True: held (the kernel drops it when this process dies, however it dies);
    False: another process holds it; None: this file system has no such locks.
    """
    if sys.platform == "win32":
        import msvcrt

        try:
            os.lseek(fd, 1 << 20, os.SEEK_SET)  # lock a byte past the holder's note, so others can read it
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # ENOLCK and the like (some network file systems)
        return None
    return True


def _running(pid: Any) -> bool:
    """Whether process ``pid`` exists on this host (only asked where the file system has no locks)."""
    if type(pid) is not int or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _holder(path: Path) -> dict[str, Any]:
    """The note a lock's holder left in it (``{}`` when it is unreadable or empty)."""
    try:
        note = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return note if isinstance(note, dict) else {}


def _describe(note: dict[str, Any]) -> str:
    return f"pid {note.get('pid', '?')} on {note.get('host', '?')}, started {note.get('started', '?')}"


class ResultsLock:
    """A held ``<results>.lock`` (:func:`lock_results`); :meth:`release` removes it."""

    def __init__(self, path: Path, fd: int, warning: str | None) -> None:
        self.path = path
        self._fd: int | None = fd
        self.warning = warning
        """Set when a lock left by a run that died was taken over (for the caller to show)."""

    def release(self) -> None:
        """Remove the lock file, then let go of the lock (idempotent)."""
        if self._fd is None:
            return
        # Unlinked while still held: a run waiting on this file notices the inode changed and retries.
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = None


def lock_results(results: str | Path) -> ResultsLock:
    """Hold the lock of results path ``results`` for this process, or say who holds it.

    Raises:
        ValueError: another live run writes the same results path (message names the path,
            the lock file and the holder's pid), or the lock file cannot be created.
    """
    path = lock_path(results)
    host = socket.gethostname()
    for _attempt in range(20):  # only a holder releasing between our open and our lock makes us go round
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise ValueError(f"{write_problem(path, exc)} (the lock of {results})") from None
        locked = _try_lock(fd)
        if locked is None and _running(_holder(path).get("pid")) and _holder(path).get("host") == host:
            locked = False  # no kernel lock to ask: a live pid on this host is taken at its word
        if locked is False:
            os.close(fd)
            note = _holder(path)
            raise ValueError(
                f"{results} is being written by another run ({_describe(note)}; lock file {path}): "
                "wait for it to finish, or give this run its own --pibench-results"
            )
        try:
            mine, now = os.fstat(fd), os.stat(path)
            same = (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)
        except OSError:
            same = False
        if not same:  # the holder removed the file after we opened it: lock the new one instead
            os.close(fd)
            continue
        left = _holder(path)
        warning = None
        if left:  # a run on this host that died without releasing (SIGKILL, os._exit) left its note:
            # the kernel freed its lock (or, without kernel locks, its pid is gone), so it is not running.
            if left.get("host", host) != host:  # its lock may not reach us across machines: never guess
                os.close(fd)
                raise ValueError(
                    f"{results} may be written by a run on another machine ({_describe(left)}; lock file {path}): "
                    f"delete {path} if that run is over"
                )
            warning = f"{results}: took over the lock left by a run that is no longer running ({_describe(left)})"
        note = {"pid": os.getpid(), "host": host, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, (json.dumps(note) + "\n").encode())
        return ResultsLock(path, fd, warning)
    raise ValueError(f"cannot take the lock {path} of {results}: it keeps changing")
