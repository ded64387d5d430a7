"""A Dataset object of the script's whose items are feature tensors (embeddings a backbone
wrote to an HDF5 file, read by h5py in __getitem__), against torch's DataLoader on the same
object; and an (N, T, D) array read by path, batched in its samples' shape."""
import numpy as np
import pytest
import torch

import stoker

h5py = pytest.importorskip("h5py")

ROWS = 40


class H5Features(torch.utils.data.Dataset):
    """The common pattern: the file opened lazily in __getitem__, an item (features, label)."""

    def __init__(self, path):
        self.path, self.file = path, None
        with h5py.File(path, "r") as f:
            self.rows = len(f["features"])

    def __len__(self):
        return self.rows

    def __getitem__(self, i):
        if self.file is None:
            self.file = h5py.File(self.path, "r")
        return torch.from_numpy(self.file["features"][i]), int(self.file["labels"][i])


def write_h5(path, shape, dtype=np.float32, **options):
    x = np.random.default_rng(0).standard_normal((ROWS, *shape)).astype(dtype)
    with h5py.File(path, "w") as f:
        f.create_dataset("features", data=x, **options)
        f.create_dataset("labels", data=np.arange(ROWS, dtype=np.int64) % 3)
    return x


def passes(loader, epochs=2):
    return [[(x.clone(), y.clone()) for x, y in loader] for _ in range(epochs)]


@pytest.mark.parametrize("shape, dtype, options", [
    ((6,), np.float32, {}),
    ((6,), np.float32, {"chunks": (8, 6), "compression": "gzip"}),
    ((6,), np.float16, {}),
    ((3, 4), np.float32, {}),  # sequences: (N, T, D)
], ids=["float32", "chunked-gzip", "float16", "sequences"])
def test_a_dataset_of_feature_tensors_gives_torchs_batches(tmp_path, shape, dtype, options):
    write_h5(tmp_path / "emb.h5", shape, dtype, **options)
    dataset = H5Features(tmp_path / "emb.h5")
    weights = torch.linspace(0.1, 1.0, ROWS, dtype=torch.double)

    def sampler():
        return torch.utils.data.WeightedRandomSampler(weights, ROWS, generator=torch.Generator().manual_seed(5))

    expected = passes(torch.utils.data.DataLoader(dataset, batch_size=16, sampler=sampler()))
    loader = stoker.DataLoader(dataset, batch_size=16, sampler=sampler(), num_workers=2)
    assert loader.transforms == "none: the Dataset's arrays batched as they are"
    got = passes(loader)
    assert [len(e) for e in got] == [len(e) for e in expected] == [3, 3]
    for (xa, ya), (xb, yb) in zip(sum(expected, []), sum(got, [])):
        assert torch.equal(ya, yb) and xb.dtype == xa.dtype and torch.equal(xa, xb)  # torch's, dtype and all
    # A chain given reads them as features, in float32, through the engine.
    loader = stoker.DataLoader(dataset, batch_size=16, sampler=sampler(), num_workers=2, transforms="none")
    assert loader.transforms == "none → float32 NCHW"  # no Standardize: the values as they are
    got = passes(loader)
    for (xa, ya), (xb, yb) in zip(sum(expected, []), sum(got, [])):
        assert torch.equal(ya, yb)
        assert xb.dtype == torch.float32 and xb.shape == xa.shape == (len(ya), *shape)
        assert torch.equal(xa.float(), xb)  # float16 values are exact in float32


def test_a_feature_item_of_another_shape_is_a_bad_sample_naming_both(tmp_path):
    class Ragged(torch.utils.data.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return np.zeros(5 if i == 3 else 4, np.float32), i

    # With a chain given (without one, torch's collate refuses them in the batch: test_passthrough.py).
    loader = stoker.DataLoader(Ragged(), batch_size=8, on_error="raise", transforms="none")
    with pytest.raises(stoker.DataError, match=r"Ragged\[3\].*the features are an array of shape \(5\); expected a "
                       r"float array of shape \(4\), as the first item's"):
        next(iter(loader))


def test_integer_features_with_a_chain_given_are_refused_in_one_line():
    class Tokens(torch.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return np.arange(8, dtype=np.int64), 0

    with pytest.raises(ValueError, match=r"^dataset: Tokens\[0\]'s image is an array of int64, not uint8; .*or "
                       r"features as a float16, float32 or float64 array or CPU tensor$"):
        stoker.DataLoader(Tokens(), transforms="none")  # without a chain they are batched as torch batches them


@pytest.mark.parametrize("features, says", [
    (torch.zeros(4, dtype=torch.bfloat16), r"torch\.bfloat16, which NumPy cannot hold: return features\.float\(\)"),
    (torch.zeros(4, requires_grad=True), r"a tensor that requires grad: return features\.detach\(\)"),
], ids=["bfloat16", "requires-grad"])
def test_a_float_tensor_stoker_cannot_read_as_it_is_says_what_to_return(features, says):
    with pytest.raises(ValueError, match=r"^dataset: list\[0\]'s features are " + says + "$"):
        stoker.DataLoader([(features, 0)] * 4, transforms="none")  # without a chain, as torch batches them


def test_an_h5_file_of_sequences_read_by_path_keeps_their_shape(tmp_path):
    x = write_h5(tmp_path / "seq.h5", (3, 4))
    loader = stoker.DataLoader(str(tmp_path / "seq.h5"), batch_size=16, transforms="none")
    batch, _ = next(iter(loader))
    assert batch.shape == (16, 3, 4) and torch.equal(batch, torch.from_numpy(x[:16]))


def test_a_list_of_h5_paths_is_told_to_be_a_pattern(tmp_path):
    write_h5(tmp_path / "emb_0.h5", (6,))
    write_h5(tmp_path / "emb_1.h5", (6,))
    files = [str(tmp_path / "emb_0.h5"), str(tmp_path / "emb_1.h5")]
    with pytest.raises(ValueError, match=r"^dataset: list\[0\]'s image is the path .*emb_0\.h5 \(\.h5: a dataset "
                       r"stoker reads by itself, not an image\); give the path itself as the dataset .*one pattern "
                       r"\('emb_\*\.h5', 'emb_\{0,1\}\.h5'\)$"):
        stoker.DataLoader(files)
    loader = stoker.DataLoader(str(tmp_path / "emb_*.h5"), batch_size=80, transforms="none")
    assert next(iter(loader))[0].shape == (80, 6)
