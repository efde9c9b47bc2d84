"""Nothing of the user's is ever destroyed, and a report always speaks for the file beside it.

Each test reproduces a case a new user ran into (folders deleted by -o, the input overwritten, two
writers to one target, a full disk, SIGTERM mid-write) and checks the rule that now holds.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from microrelease.app.cli import main
from microrelease.core.data.samples import microdata_sample, sample

TOY = sample("toy")
HOSPITAL = Path(str(sample("toy").folder)).parent / "hospital"


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def release(out, *extra) -> list[str]:
    return ["release", "--sample", "toy", "--k", "2", "--max-sup", "2", "-o", str(out), *extra]


def microaggregate(out, *extra) -> list[str]:
    return ["microaggregate", "--sample", "eia", "--k", "3", "-o", str(out), *extra]


def dp(out, *extra) -> list[str]:
    return ["dp", str(microdata_sample("eia").path), "--attrs", "RESSALES", "--epsilon", "1", "--method", "record-noise", "-o", str(out),
            *extra]


def sequential(out, *extra) -> list[str]:
    h = HOSPITAL
    return ["sequential", str(h / "patients.csv"), str(h / "visits.csv"), "--entity-id", "patient_id",
            "--qi", "age,sex,zip", "--identifier", "name", "--sequence-key", "visit_id", "--order-by", "day",
            "--code", "code", "--code-hierarchy", str(h / "hospital_hierarchy_code.csv"), "--hierarchy-dir", str(h), "--drop", "cost",
            "--k", "5", "-o", str(out), *extra]


FILE_COMMANDS = {"release": release, "microaggregate": microaggregate, "dp": dp}


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): sha(p) for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("command", sorted(FILE_COMMANDS))
def test_an_existing_folder_as_output_is_refused_and_kept(command, tmp_path, capsys):
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "keep").write_text("x")
    assert main(FILE_COMMANDS[command](str(folder) + "/")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a folder" in err and "nothing was written" in err
    assert (folder / "keep").read_text() == "x" and tree(tmp_path) == {"v/keep": sha(folder / "keep")}


def test_sequential_refuses_a_folder_with_other_files_and_the_parent_of_its_inputs(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "existing"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    assert main(sequential(folder)) == 2
    assert "notes.txt exists and is not part of a release" in capsys.readouterr().err
    assert tree(folder) == {"notes.txt": sha(folder / "notes.txt")}
    # `-o ..` from inside a copy of the data: the parent holds the inputs
    data = tmp_path / "data"
    shutil.copytree(HOSPITAL, data / "hospital")
    before = tree(data)
    monkeypatch.chdir(data / "hospital")
    args = [a.replace(str(HOSPITAL), str(data / "hospital")) for a in sequential("..")]
    assert main(args) == 2
    assert "would overwrite, hold or sit in the input" in capsys.readouterr().err
    assert tree(data) == before


def test_release_to_the_parent_folder_is_refused(tmp_path, capsys, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "precious.csv").write_text("a\n1\n")
    monkeypatch.chdir(tmp_path / "sub")
    assert main(release("..")) == 2
    assert "is a folder" in capsys.readouterr().err
    assert (tmp_path / "precious.csv").read_text() == "a\n1\n"


def test_output_equal_to_the_input_or_a_hierarchy_is_refused(tmp_path, capsys):
    data = tmp_path / "toy"
    shutil.copytree(TOY.folder, data)
    before = tree(data)
    common = ["release", str(data / "test.csv"), "--qi", "age,gender,zipcode", "--hierarchy-dir", str(data),
              "--k", "2", "--max-sup", "2"]
    for target in (data / "test.csv", data / "test_hierarchy_age.csv"):
        assert main([*common, "-o", str(target)]) == 2
        assert "would overwrite, hold or sit in the input" in capsys.readouterr().err
    copy = tmp_path / "eia.csv"
    shutil.copy(microdata_sample("eia").path, copy)
    assert main(["microaggregate", str(copy), "--qi", "RESSALES,COMSALES", "--k", "3", "-o", str(copy)]) == 2
    assert "would overwrite" in capsys.readouterr().err
    assert tree(data) == before


def test_a_previous_release_is_replaced_only_with_force_and_a_foreign_file_never(tmp_path, capsys):
    out = tmp_path / "out.csv"
    assert main(release(out)) == 0
    first = json.loads((tmp_path / "out.report.json").read_text())
    assert main(release(out)) == 2
    err = capsys.readouterr().err
    assert err.startswith("microrelease: error: --force: ") and "holds a previous release" in err
    assert main(release(out, "--force")) == 0
    second = json.loads((tmp_path / "out.report.json").read_text())
    assert second["output"]["files"][0]["checksum"] == sha(out) and second["created"] >= first["created"]
    # a file the user wrote, or a release the user edited since: never overwritten, even with --force
    out.write_text(out.read_text() + "edited\n")
    assert main(release(out, "--force")) == 2
    assert "changed after microrelease wrote it" in capsys.readouterr().err
    mine = tmp_path / "mine.csv"
    mine.write_text("precious\n")
    assert main(release(mine, "--force")) == 2
    assert "is not part of a release written by microrelease" in capsys.readouterr().err
    assert mine.read_text() == "precious\n"


def test_a_second_writer_fails_on_the_lock_and_nothing_is_touched(tmp_path, capsys):
    out = tmp_path / "out.csv"
    lock = tmp_path / ".out.report.json.lock"
    lock.write_text("12345\n")
    assert main(release(out)) == 2
    assert "another microrelease is writing" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.report.json.lock"]


def _default_sigint() -> None:
    # A shell without job control starts background jobs with SIGINT ignored, and Python then never
    # raises KeyboardInterrupt: the child must get Ctrl-C as a user's terminal would deliver it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_cli(*args, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "microrelease.app.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint, **kwargs)


def test_concurrent_writers_never_leave_a_report_that_names_another_file(tmp_path):
    out = tmp_path / "out.csv"
    for _ in range(4):
        runs = [run_cli(*release(out, "--node", node, "--force", "--quiet")) for node in ("1,1,2", "2,1,3")]
        results = [(p.wait(60), p.communicate()[1]) for p in runs]
        for code, err in results:
            assert code == 0 or (code == 2 and "another microrelease is writing" in err), err
        report = json.loads((tmp_path / "out.report.json").read_text())
        assert report["output"]["files"][0]["checksum"] == sha(out)
        assert report["html_report"]["checksum"] == sha(tmp_path / "out.report.html")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "out.report.html", "out.report.json"]


@pytest.fixture
def tiny_disk(tmp_path):
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tiny tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_a_full_disk_leaves_the_previous_release_and_report_intact(tiny_disk, engine, capsys):
    out = tiny_disk / "out.csv"
    assert main(release(out, "--engine", engine)) == 0
    before = tree(tiny_disk)
    filler = tiny_disk / "filler"
    with open(filler, "wb") as fh:  # leave less room than a second release needs
        try:
            fh.write(b"x" * (64 << 10))
        except OSError:
            pass
    before["filler"] = sha(filler)
    assert main(["release", "--sample", "adult", "--qi", "sex,age", "--k", "2", "--engine", engine, "-o", str(out),
                 "--force", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(tiny_disk) in err and "previous files are untouched" in err, err
    assert tree(tiny_disk) == before


def test_a_writer_that_fails_leaves_the_previous_release_intact(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out.csv"
    assert main(release(out, "--engine", "pandas")) == 0
    before = tree(tmp_path)
    import pandas as pd

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", str(tmp_path / ".out.csv.partial"))

    class FullWriter:  # the csv module writes a text-only release (core.release.table.write_csv)
        def __init__(self, *args, **kwargs):
            pass

        writerow = writerows = full

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    monkeypatch.setattr(csv, "writer", FullWriter)
    assert main(release(out, "--engine", "pandas", "--force")) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert tree(tmp_path) == before


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_mid_write_removes_temporary_files_and_spill_folders(tmp_path, sig, code):
    from scale_data import replicate_adult

    big = replicate_adult(tmp_path / "big.csv", 60, padding=40)
    adult = sample("adult")
    spill = tmp_path / "spill"
    spill.mkdir()
    out = tmp_path / "out" / "release.csv"
    out.parent.mkdir()  # -o refuses a missing folder
    env = {**os.environ, "TMPDIR": str(spill)}
    proc = run_cli("release", str(big), "--qi", ",".join(adult.qi), "--hierarchy-dir", str(adult.folder),
                   "--k", "5", "--max-sup", "1%", "--node", "0,4,0,1,3,2,0,1", "--memory-limit", "256MB",
                   "-o", str(out), env=env)
    with proc:  # its pipes closed whatever happens
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            if out.parent.exists() and any(p.name.startswith(".release.csv.partial") for p in out.parent.iterdir()):
                break
            time.sleep(0.02)
        assert proc.poll() is None, proc.communicate()[1]
        proc.send_signal(sig)
        assert proc.wait(60) == code
        err = proc.communicate()[1]
    assert err.count("\n") == 1 and "temporary files removed" in err, err
    assert not out.parent.exists() or list(out.parent.iterdir()) == []
    assert list(spill.iterdir()) == []


def test_a_folder_that_cannot_be_written_is_named_in_one_line(tmp_path, capsys):
    mount = tmp_path / "readonly"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here: {done.stderr.decode().strip()}")
    try:
        for command in (release(mount / "out.csv"), sequential(mount / "out")):
            assert main(command) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and str(mount) in err and "Read-only file system" in err, err
        assert list(mount.iterdir()) == []
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_links_partitions_and_hierarchy_names_cannot_be_used_to_overwrite_inputs(tmp_path, capsys):
    data = tmp_path / "toy"
    shutil.copytree(TOY.folder, data)
    (tmp_path / "alias.csv").symlink_to(data / "test.csv")
    (tmp_path / "hier").symlink_to(data)
    before = tree(data)
    common = ["--qi", "age,gender,zipcode", "--hierarchy-dir", str(data), "--k", "2", "--max-sup", "2"]
    # the input reached through a link, and an output written through a linked folder onto the input
    assert main(["release", str(tmp_path / "alias.csv"), *common, "-o", str(data / "test.csv")]) == 2
    assert main(["release", str(data / "test.csv"), *common, "-o", str(tmp_path / "hier" / "test.csv")]) == 2
    # a file named like a hierarchy, in the hierarchy folder
    for name in ("age.csv", "x_hierarchy_zipcode.csv"):
        assert main(["release", str(data / "test.csv"), *common, "-o", str(data / name)]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 4 and all("nothing was written" in e for e in errors), errors
    # a release written among the partitions of its input (given as a glob)
    parts = tmp_path / "parts"
    parts.mkdir()
    for i in range(2):
        shutil.copy(data / "test.csv", parts / f"p{i}.csv")
    assert main(["release", str(parts / "*.csv"), *common, "-o", str(parts / "p9.csv")]) == 2
    assert "sit in the input" in capsys.readouterr().err
    assert tree(data) == before and sorted(p.name for p in parts.iterdir()) == ["p0.csv", "p1.csv"]


def test_a_csv_and_a_parquet_release_do_not_share_a_report(tmp_path, capsys):
    assert main(release(tmp_path / "same.csv")) == 0
    report = (tmp_path / "same.report.json").read_text()
    for extra in ((), ("--force",)):
        assert main(release(tmp_path / "same.parquet", *extra)) == 2
        assert "is the report of the release ['same.csv'], not of same.parquet" in capsys.readouterr().err
    assert (tmp_path / "same.report.json").read_text() == report and not (tmp_path / "same.parquet").exists()


def test_a_stale_lock_says_its_process_is_gone(tmp_path, capsys):
    (tmp_path / ".out.report.json.lock").write_text("4194303\n")  # above Linux's largest pid: never running
    assert main(release(tmp_path / "out.csv")) == 2
    assert "left by process 4194303, which is no longer running: delete the lock file" in capsys.readouterr().err


def test_a_sigterm_just_after_the_commit_is_said_not_a_silent_kill(tmp_path, capsys, monkeypatch):
    """The console script keeps its handler to the end: a SIGTERM once the file is committed is said (the
    output is complete, the command's status kept), neither a traceback nor a silent exit -15."""
    from microrelease.app.cli import run as cli_run

    finished = cli_run._FINISHED.set

    def finish_then_terminated():
        finished()
        os.kill(os.getpid(), signal.SIGTERM)  # arrives after the commit, before the process ends

    previous = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(cli_run._FINISHED, "set", finish_then_terminated)
    monkeypatch.setattr("sys.argv", ["microrelease", *release(tmp_path / "out.csv"), "--quiet"])
    try:
        assert cli_run.entry() == 0
    finally:
        signal.signal(signal.SIGTERM, previous)
    err = capsys.readouterr().err
    assert "SIGTERM received after the command had finished: its output is complete (exit 0)" in err
    assert (tmp_path / "out.csv").exists()
