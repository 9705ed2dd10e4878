"""Issue 23 (class 5): atomic writes honour the umask and never leave half a file; one run per results path."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_pibench.results.document import Journal, atomic_write_json, read_results
from pytest_pibench.results.files import atomic_write, file_mode, lock_path, lock_results

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_pibench"
POSIX = pytest.mark.skipif(sys.platform == "win32", reason="umask, rlimits and SIGKILL are POSIX")


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def python(code: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60, **kwargs
    )


# ---------------------------------------------------------------------------------------------- umask


def test_an_atomic_write_gets_the_mode_a_plain_open_gives(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    atomic_write_json(tmp_path / "results.json", {"a": 1})
    Journal(tmp_path / "j.journal.jsonl").open({"started": "now"})
    assert mode_of(tmp_path / "results.json") == mode_of(plain) == file_mode()
    assert mode_of(tmp_path / "j.journal.jsonl") == mode_of(plain)


@POSIX
@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_atomic_writes_honour_the_umask(tmp_path, umask, expected):
    # mkstemp alone makes 0600 files whatever the umask; each umask in a fresh process (it is read once).
    out = python(
        f"""
        from pytest_pibench.results.document import atomic_write_json
        from pytest_pibench.results.files import file_mode
        atomic_write_json({str(tmp_path / "r.json")!r}, {{"rows": []}})
        print(oct(file_mode()))
        """,
        umask=umask,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == oct(expected)
    assert mode_of(tmp_path / "r.json") == expected


# ---------------------------------------------------------------------------------------------- a full disk


@POSIX
def test_a_write_that_fills_the_disk_leaves_the_old_file_whole_and_no_temporary(tmp_path):
    target = tmp_path / "results.json"
    target.write_text('{"old": true}\n')
    # RLIMIT_FSIZE makes writes past 4 KiB fail with EFBIG (SIGXFSZ ignored), as a full disk fails them.
    out = python(
        f"""
        import errno, resource, signal
        from pytest_pibench.results.files import atomic_write
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            atomic_write({str(target)!r}, ["x" * 10000])
        except OSError as exc:
            print(errno.errorcode[exc.errno])
        """
    )
    assert out.stdout.strip() == "EFBIG", out.stderr
    assert target.read_text() == '{"old": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_a_failure_while_writing_keeps_the_old_file(tmp_path):
    target = tmp_path / "results.json"
    target.write_text("old\n")

    def chunks():
        yield "new, half"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, chunks())
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


# ---------------------------------------------------------------------------------------------- journal


def test_a_resumed_journal_keeps_carried_rows_until_the_item_is_redone(tmp_path):
    def row(scenario: str, passed: bool) -> dict[str, object]:
        return {"scenario_id": scenario, "agent": "a", "trial": 0, "status": "completed", "all_passed": passed}

    journal = Journal(tmp_path / "r.journal.jsonl")
    journal.open({"settings": {}}, [row("S1", False), row("S2", True)])
    journal.append(row("S1", True))  # S1 re-run: its new row replaces the carried one
    journal.close(remove=False)
    lines = [json.loads(line) for line in (tmp_path / "r.journal.jsonl").read_text().splitlines()]
    assert [sorted(line) for line in lines] == [
        ["format", "format_version", "settings"],
        ["carried"],
        ["carried"],
        ["row"],
    ]
    rows = read_results(tmp_path / "r.journal.jsonl")["rows"]
    assert sorted((r["scenario_id"], r["all_passed"]) for r in rows) == [("S1", True), ("S2", True)]


# ---------------------------------------------------------------------------------------------- the lock

HOLDER = """
import sys
from pytest_pibench.results.files import lock_results
lock = lock_results(sys.argv[1])
print("locked", flush=True)
if sys.argv[2] == "die":
    import os, signal
    os.kill(os.getpid(), signal.SIGKILL)
sys.stdin.read()  # held until the test closes our stdin
lock.release()
"""


def start_holder(results: Path, how: str) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(results), how],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None
    assert holder.stdout.readline() == "locked\n"  # the event: it holds the lock now
    return holder


def test_the_lock_names_its_holder_and_release_removes_it(tmp_path):
    results = tmp_path / "r.json"
    lock = lock_results(results)
    note = json.loads(lock_path(results).read_text())
    assert lock_path(results).name == "r.json.lock"
    assert note["pid"] == os.getpid() and note["host"] == socket.gethostname()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}", note["started"])
    assert lock.warning is None
    lock.release()
    lock.release()  # idempotent
    assert not lock_path(results).exists()
    lock_results(results).release()  # free again


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    results = tmp_path / "r.json"
    holder = start_holder(results, "hold")
    try:
        with pytest.raises(ValueError) as refused:
            lock_results(results)
        message = str(refused.value)
        assert f"{results} is being written by another run (pid {holder.pid} on {socket.gethostname()}" in message
        assert str(lock_path(results)) in message
    finally:
        holder.communicate("", timeout=30)
    assert holder.returncode == 0
    lock_results(results).release()  # the holder released it: free now, without a warning


@POSIX
def test_a_lock_left_by_a_killed_run_is_taken_over_with_a_warning(tmp_path):
    results = tmp_path / "r.json"
    holder = start_holder(results, "die")
    holder.wait(timeout=30)
    assert holder.returncode == -signal.SIGKILL
    assert json.loads(lock_path(results).read_text())["pid"] == holder.pid  # left behind
    lock = lock_results(results)
    assert lock.warning is not None
    assert "took over the lock left by a run that is no longer running" in lock.warning
    assert f"pid {holder.pid} on {socket.gethostname()}" in lock.warning
    assert json.loads(lock_path(results).read_text())["pid"] == os.getpid()
    lock.release()


def test_a_lock_left_on_another_host_is_never_taken_over(tmp_path):
    results = tmp_path / "r.json"
    note = {"pid": 4242, "host": "build-box-7", "started": "2026-01-01T00:00:00+0000"}
    lock_path(results).write_text(json.dumps(note))
    with pytest.raises(ValueError, match=r"another machine \(pid 4242 on build-box-7.*delete .*r\.json\.lock"):
        lock_results(results)
    assert json.loads(lock_path(results).read_text()) == note  # left for its owner


# ---------------------------------------------------------------------------------------------- one writer


def test_every_file_replaced_in_place_goes_through_the_one_atomic_writer():
    """mkstemp makes 0600 files: an atomic writer of its own would lose the umask again."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "files.py" and path.parent.name == "results":
            continue
        text = path.read_text(encoding="utf-8")
        for pattern in ("os.replace(", "os.rename(", "NamedTemporaryFile(", "mkstemp("):
            for line in text.splitlines():
                if pattern in line and "probe" not in line:  # unwritable_reason's probe is removed at once
                    offenders.append(f"{path.relative_to(PACKAGE)}: {line.strip()}")
    assert offenders == []
