"""The other sources stoker train reads, through the Python DataLoader: Debian's Fashion-MNIST
(IDX, gzip'd) with the chain that suits it, and its own test split."""
import gzip
import os

import numpy as np
import pytest
import torch

import stoker

FASHION = "/usr/share/datasets/fashion-mnist"
pytestmark = pytest.mark.skipif(not os.path.isdir(FASHION), reason="needs Debian's dataset-fashion-mnist")


def idx(name, offset):
    with gzip.open(os.path.join(FASHION, name)) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def test_fashion_mnist_is_its_idx_files_with_its_own_normalisation():
    loader = stoker.DataLoader(FASHION, batch_size=100, num_workers=2)
    assert len(loader) == 600 and len(loader.class_names) == 10
    images = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    labels = idx("train-labels-idx1-ubyte.gz", 8)
    x, y = next(iter(loader))
    assert x.shape == (100, 1, 28, 28) and y.dtype == torch.int64
    assert torch.equal(y, torch.from_numpy(labels[:100].astype(np.int64)))
    expected = (torch.from_numpy(images[:100].astype(np.float32)) / 255 - 0.286) / 0.353
    assert torch.allclose(x, expected, atol=1e-5)


def test_the_test_split_is_t10k():
    loader = stoker.DataLoader(FASHION, batch_size=1000, split="t10k")
    assert len(loader) == 10
    _, y = next(iter(loader))
    assert torch.equal(y, torch.from_numpy(idx("t10k-labels-idx1-ubyte.gz", 8)[:1000].astype(np.int64)))
