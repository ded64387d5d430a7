"""What stoker.DataLoader shows while it opens its data: listing ImageNet's folder, or indexing
its shards, takes seconds and on a network file system minutes. By the rule the command line
keeps too (OpenProgress::line_due), a line on stderr says what the open does once it has run a
second past its checks, whatever it has counted, then one every 10 s; a path that fails its
checks is its error alone. The slow disk is tests/slow_listing, built here and preloaded."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from stoker import _stoker

SLOW_LISTING = pathlib.Path(__file__).resolve().parents[2] / "tests" / "slow_listing" / "slow_listing.cpp"
OPEN = """import os, sys
from stoker import _stoker
try:
    print(len(_stoker.Source(os.fsencode(sys.argv[1]))))
except _stoker.DataError as e:
    print(e)
"""


@pytest.fixture(scope="module")
def slow_listing(tmp_path_factory):
    """The library that makes listing (and with SLOW_STAT_MS, looking at) paths under a folder slow."""
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("no C++ compiler to build tests/slow_listing")
    library = tmp_path_factory.mktemp("slow_listing") / "libslow_listing.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", str(library), str(SLOW_LISTING), "-ldl"], check=True)
    return library


def open_slowly(library, path, under, **slow):
    """stoker opens `path` in a Python of its own, with the paths under `under` slow as `slow` says."""
    env = dict(os.environ, LD_PRELOAD=str(library), SLOW_LISTING_UNDER=str(under),
               **{k: str(v) for k, v in slow.items()})
    return subprocess.run([sys.executable, "-c", OPEN, str(path)], env=env, capture_output=True, text=True,
                          timeout=60)


def test_a_slow_open_that_counts_nothing_says_so_within_two_seconds(tmp_path, slow_listing):
    for c in range(3):
        (tmp_path / f"c{c}").mkdir()
        (tmp_path / f"c{c}" / "a.jpg").write_bytes(b"x")
    # The root's listing takes 2.5 s, before any class folder is counted; its class folders are quick.
    done = open_slowly(slow_listing, tmp_path, tmp_path, SLOW_LISTING_MS=2500, SLOW_LISTING_DEPTH=0)
    assert (done.stdout, done.stderr) == ("3\n", f"opening {tmp_path}, 1 s\n")


def test_a_bad_path_is_its_error_alone_however_slow_its_checks(tmp_path, slow_listing):
    missing = tmp_path / "missing"
    # Each look at a path under tmp_path takes 0.7 s, as on a loaded machine: the checks take
    # over a second, and still no line comes before the error.
    done = open_slowly(slow_listing, missing, tmp_path, SLOW_STAT_MS=700)
    assert (done.stdout, done.stderr) == (f"dataset path {missing} does not exist\n", "")


def test_the_lines_say_what_was_counted():
    assert _stoker.open_progress_line("train/", 0, 0, 0, False, 1.2) == "opening train/, 1 s"
    assert _stoker.open_progress_line("train/", 412000, 322, 1000, False, 4.2) == \
        "listing train/: 412,000 files in 322 of 1,000 class folders, 4 s; about 9 s left"
    assert _stoker.open_progress_line("s-{0..1281}.tar", 300000, 300, 1282, True, 12) == \
        "indexing s-{0..1281}.tar: 300 of 1,282 files (300,000 samples), 12 s; about 40 s left"
