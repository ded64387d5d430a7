"""Standardize's fit cache: a stoker.DataLoader over a chunked .h5 file reads the statistics a
fit over the same rows kept in $XDG_CACHE_HOME/stoker, and says so in one line; a file written
again is fitted again; a damaged cache file counts as absent; STOKER_FIT_CACHE=0 turns it off.
The cache is observed through what it holds: statistics written into it by hand come back."""
import os

import numpy as np
import pytest
import torch

import stoker

ROWS, COLS = 40, 3
X = np.stack([np.arange(ROWS), np.arange(ROWS) ** 2, np.full(ROWS, 5.0)], axis=1).astype(np.float32)
Y = np.arange(ROWS, dtype=np.int64) % 2
STANDARDIZED = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1)


def write_chunked_h5(path):
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=X, chunks=(8, COLS), compression="gzip")
        f.create_dataset("y", data=Y)
    return str(path)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.delenv("STOKER_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("STOKER_FIT_CACHE", "1")
    return tmp_path / "xdg" / "stoker"


def first_batch(path):
    x, _ = next(iter(stoker.DataLoader(path, batch_size=ROWS, transforms="Standardize")))
    return x.numpy()


def kept_as_identity(cache_file):
    """Writes mean 0 and std 1 into the cache file: a loader that reads it gives the rows as stored."""
    key = cache_file.read_text().split("mean ")[0]
    cache_file.write_text(key + "mean" + " 0" * COLS + "\nstd" + " 1" * COLS + "\nend\n")


def test_a_second_loader_reads_the_fit_kept_and_says_so(tmp_path, cache, capfd):
    path = write_chunked_h5(tmp_path / "rows.h5")
    assert np.allclose(first_batch(path), STANDARDIZED, atol=1e-5)
    assert "fit cache" not in capfd.readouterr().err
    (kept,) = cache.glob("fit-*.txt")
    assert kept.read_text().startswith(f"stoker fit cache\npath {path}\ndataset x\n")

    kept_as_identity(kept)
    assert np.array_equal(first_batch(path), X)  # the kept statistics, not a fit
    err = capfd.readouterr().err
    assert f"Standardize: the mean and std of {path} (dataset x) read from the fit cache {kept}; " \
           "STOKER_FIT_CACHE=0 fits again" in err, err
    assert len(err.strip().splitlines()) == 1, err

    # The file written again (another modification time): fitted again, kept anew.
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert np.allclose(first_batch(path), STANDARDIZED, atol=1e-5)
    assert len(list(cache.glob("fit-*.txt"))) == 2


@pytest.mark.parametrize("damage", ["", "stoker fit cache\n", "garbage\x00\xff", "cut"])
def test_a_damaged_cache_file_is_fitted_again_and_rewritten(tmp_path, cache, capfd, damage):
    path = write_chunked_h5(tmp_path / "rows.h5")
    first_batch(path)
    (kept,) = cache.glob("fit-*.txt")
    whole = kept.read_text()
    kept.write_bytes(whole[: len(whole) - 10].encode() if damage == "cut" else damage.encode("latin-1"))
    assert np.allclose(first_batch(path), STANDARDIZED, atol=1e-5)
    assert "fit cache" not in capfd.readouterr().err
    assert kept.read_text() == whole


def test_an_unreadable_cache_folder_leaves_the_fit_as_it_is(tmp_path, cache, monkeypatch, capfd):
    path = write_chunked_h5(tmp_path / "rows.h5")
    (tmp_path / "xdg").write_text("a file where the cache folder would be")
    assert np.allclose(first_batch(path), STANDARDIZED, atol=1e-5)
    assert np.allclose(first_batch(path), STANDARDIZED, atol=1e-5)
    assert "fit cache" not in capfd.readouterr().err


def test_stoker_fit_cache_0_turns_it_off(tmp_path, cache, monkeypatch, capfd):
    path = write_chunked_h5(tmp_path / "rows.h5")
    first_batch(path)
    (kept,) = cache.glob("fit-*.txt")
    kept_as_identity(kept)
    monkeypatch.setenv("STOKER_FIT_CACHE", "0")
    assert np.allclose(first_batch(path), STANDARDIZED, atol=1e-5)
    assert "fit cache" not in capfd.readouterr().err


def test_a_file_whose_sums_opening_gathers_is_not_cached(tmp_path, cache):
    """An .npz (or a contiguous .h5) is summed as it is opened: nothing to keep."""
    np.savez(tmp_path / "rows.npz", x=X, y=Y)
    assert np.allclose(first_batch(str(tmp_path / "rows.npz")), STANDARDIZED, atol=1e-5)
    assert not cache.exists()
