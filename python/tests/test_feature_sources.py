"""Feature vectors from every file format stoker train reads, each written by its own library
(numpy, h5py, torch, the csv module) and read back in order through stoker.DataLoader."""
import csv

import numpy as np
import pytest
import torch

import stoker

ROWS, COLS = 30, 5
X = (np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) - 40) / 7
Y = np.arange(ROWS, dtype=np.int64) % 3


def write_npz(folder):
    np.savez(folder / "rows.npz", x=X, y=Y)
    return folder / "rows.npz"


def write_compressed_npz(folder):
    np.savez_compressed(folder / "rows.npz", features=X, labels=Y)
    return folder / "rows.npz"


def write_npy_pair(folder):
    np.save(folder / "x.npy", X)
    np.save(folder / "y.npy", Y)
    return folder / "x.npy"


def write_h5(folder):
    h5py = pytest.importorskip("h5py")
    with h5py.File(folder / "rows.h5", "w") as f:
        f.create_dataset("x", data=X)
        f.create_dataset("y", data=Y)
    return folder / "rows.h5"


def write_chunked_h5(folder):
    """As h5py users write large feature files: gzip, shuffle and a checksum, in chunks that hold
    part of a row (read row by row, not whole)."""
    h5py = pytest.importorskip("h5py")
    with h5py.File(folder / "rows.h5", "w") as f:
        f.create_dataset("x", data=X, chunks=(4, 2), compression="gzip", shuffle=True, fletcher32=True)
        f.create_dataset("y", data=Y)
    return folder / "rows.h5"


def write_pt(folder):
    torch.save({"x": torch.from_numpy(X), "y": torch.from_numpy(Y)}, folder / "rows.pt")
    return folder / "rows.pt"


def write_tensor_dataset(folder):
    torch.save(torch.utils.data.TensorDataset(torch.from_numpy(X), torch.from_numpy(Y)), folder / "rows.pt")
    return folder / "rows.pt"


def write_csv(folder):
    with open(folder / "rows.csv", "w", newline="") as f:
        out = csv.writer(f)
        out.writerow([f"f{i}" for i in range(COLS)] + ["label"])
        for row, label in zip(X, Y):
            out.writerow([repr(float(v)) for v in row] + [int(label)])
    return folder / "rows.csv"


WRITERS = [write_npz, write_compressed_npz, write_npy_pair, write_h5, write_chunked_h5, write_pt, write_tensor_dataset,
           write_csv]


@pytest.mark.parametrize("write", WRITERS, ids=[w.__name__[len("write_"):] for w in WRITERS])
def test_rows_come_back_in_order_with_their_labels(write, tmp_path):
    path = write(tmp_path)
    loader = stoker.DataLoader(str(path), batch_size=8, num_workers=2, transforms="none")
    assert len(loader) == 4  # 30 rows, the last batch of 6
    xs, ys = zip(*[(x.clone(), y.clone()) for x, y in loader])
    x, y = torch.cat(xs), torch.cat(ys)
    assert x.dtype == torch.float32 and x.shape == (ROWS, COLS)
    assert torch.equal(x, torch.from_numpy(X))
    assert torch.equal(y, torch.from_numpy(Y))


def test_shuffled_rows_are_a_permutation_that_keeps_each_rows_label(tmp_path):
    loader = stoker.DataLoader(str(write_npz(tmp_path)), batch_size=7, shuffle=True, seed=3, transforms="none")
    x, y = (torch.cat(t) for t in zip(*[(a.clone(), b.clone()) for a, b in loader]))
    order = ((x[:, 0] * 7 + 40) / COLS).round().long()  # each row's index, from its first value
    assert sorted(order.tolist()) == list(range(ROWS)) and order.tolist() != list(range(ROWS))
    assert torch.equal(y, torch.from_numpy(Y)[order])


def test_by_default_each_column_is_standardised_with_the_training_rows_statistics(tmp_path):
    loader = stoker.DataLoader(str(write_npz(tmp_path)), batch_size=30)
    x, _ = next(iter(loader))
    expected = (X - X.mean(axis=0)) / X.std(axis=0)  # the population's standard deviation
    assert torch.allclose(x, torch.from_numpy(expected.astype(np.float32)), atol=1e-5)


def test_a_chunked_h5_files_standardize_is_fitted_over_whole_chunks_spread_over_it(tmp_path):
    """Where opening gathers no sums (compressed chunks), the fit reads a sample of fit_rows rows
    (262,144 by default), whole chunks evenly spread from the first to the last; None: every row."""
    path = str(write_chunked_h5(tmp_path))  # 30 rows in chunks of 4 rows: 8 blocks, the last of 2 rows
    sample = X[np.r_[0:4, 28:30]]  # fit_rows=8: 2 blocks, the first and the last
    for chain, rows in [("Standardize(fit_rows=8)", sample), ("Standardize(fit_rows=None)", X), ("Standardize", X)]:
        x, _ = next(iter(stoker.DataLoader(path, batch_size=30, transforms=chain)))
        expected = (X - rows.mean(axis=0)) / rows.std(axis=0)
        assert torch.allclose(x, torch.from_numpy(expected.astype(np.float32)), atol=1e-5), chain


def test_a_damaged_chunk_of_an_h5_file_is_a_bad_sample_named_with_its_row(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = write_chunked_h5(tmp_path)
    with h5py.File(path, "r") as f:  # the chunk of rows 8..11, columns 0..1: where its bytes lie
        info = f["x"].id.get_chunk_info_by_coord((8, 0))
    with open(path, "r+b") as f:
        f.seek(info.byte_offset + info.size // 2)
        byte = f.read(1)
        f.seek(info.byte_offset + info.size // 2)
        f.write(bytes([byte[0] ^ 0x5A]))
    loader = stoker.DataLoader(str(path), batch_size=30, transforms="none", on_error="raise")
    with pytest.raises(stoker.DataError, match=r"rows\.h5:x\[8\]: its chunk at \(8, 0\) cannot be read"):
        next(iter(loader))
    # Substituted, the epoch goes on, and stats() names the four rows of that chunk.
    loader = stoker.DataLoader(str(path), batch_size=30, transforms="none", max_bad=0.2)
    x, _ = next(iter(loader))
    assert x.shape == (ROWS, COLS)
    bad = loader.stats()["bad_samples"]
    assert sorted(b["index"] for b in bad) == [8, 9, 10, 11], bad


def test_a_nan_in_a_chunked_h5_file_is_named_at_its_row_not_at_open(tmp_path):
    """Opening reads no chunk; each row is checked as it is read, so the NaN is a bad sample
    named with its row and column, as torch's DataLoader over h5py would hand it on silently."""
    h5py = pytest.importorskip("h5py")
    x = X.copy()
    x[9, 1] = np.nan
    with h5py.File(tmp_path / "rows.h5", "w") as f:
        f.create_dataset("x", data=x, chunks=(4, 2), compression="gzip")
        f.create_dataset("y", data=Y)
    loader = stoker.DataLoader(str(tmp_path / "rows.h5"), batch_size=30, transforms="none", on_error="raise")
    with pytest.raises(stoker.DataError, match=r"a feature of sample 9 \(column 1\) is nan; fill or drop"):
        next(iter(loader))
    loader = stoker.DataLoader(str(tmp_path / "rows.h5"), batch_size=30, transforms="none", max_bad=0.2)
    next(iter(loader))
    assert [b["index"] for b in loader.stats()["bad_samples"]] == [9]
