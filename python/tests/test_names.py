"""Names that are not UTF-8 (a class folder named with bytes such as 0xff) survive: Python
sees them as os.fsdecode makes them (surrogate escapes), os.fsencode gives the bytes back, and
a loader on such data can be checkpointed and resumed. Paths with NUL bytes are refused."""
import os

import numpy as np
import pytest
import torchvision
from PIL import Image

import stoker


@pytest.fixture()
def odd_names(tmp_path):
    root = tmp_path / "data"
    for name in (b"bad\xff\xfe", b"fine"):
        folder = os.path.join(os.fsencode(root), name)
        os.makedirs(folder)
        for i in range(3):
            Image.fromarray(np.full((8, 8, 3), 30 * i, np.uint8)).save(os.fsdecode(os.path.join(folder, b"%d.png" % i)))
    return root


def test_class_names_keep_their_bytes(odd_names):
    loader = stoker.DataLoader(odd_names, batch_size=2, transforms="Resize((8, 8))")
    assert [os.fsencode(c) for c in loader.class_names] == [b"bad\xff\xfe", b"fine"]
    assert loader.class_names == torchvision.datasets.ImageFolder(str(odd_names)).classes
    assert os.fsencode(loader.dataset.samples[0][0]).endswith(b"bad\xff\xfe/0.png")
    state = loader.state_dict()
    resumed = stoker.DataLoader(odd_names, batch_size=2, transforms="Resize((8, 8))")
    resumed.load_state_dict(state)
    assert [y.tolist() for _, y in resumed] == [[0, 0], [0, 1], [1, 1]]


def test_an_imagefolder_object_with_such_names_reads_the_files(odd_names):
    folder = torchvision.datasets.ImageFolder(str(odd_names))
    loader = stoker.DataLoader(folder, batch_size=6, transforms="Resize((8, 8))")
    x, y = next(iter(loader))
    assert y.tolist() == [0, 0, 0, 1, 1, 1] and loader.stats()["bad"] == 0


def test_a_bad_samples_odd_name_comes_back_whole(odd_names):
    folder = torchvision.datasets.ImageFolder(str(odd_names))
    listed = os.path.join(os.fsencode(odd_names), b"bad\xff\xfe", b"1.png")
    os.remove(listed)
    os.makedirs(listed)  # listed, then unreadable
    loader = stoker.DataLoader(folder, batch_size=6, transforms="Resize((8, 8))", max_bad=0.5)
    next(iter(loader))
    bad = loader.stats()["bad_samples"]
    assert len(bad) == 1 and os.fsencode(bad[0]["path"]).endswith(b"bad\xff\xfe/1.png")


@pytest.mark.parametrize("make", [
    lambda tmp: stoker.DataLoader(str(tmp) + "/x\0y"),
    lambda tmp: stoker.monitor(log=str(tmp) + "/x\0y.csv"),
    lambda tmp: stoker.monitor(tensorboard=str(tmp) + "/runs\0x"),
])
def test_a_path_with_a_nul_byte_is_refused(tmp_path, make):
    with pytest.raises(ValueError, match="without NUL bytes"):
        make(tmp_path)


@pytest.mark.parametrize("log", [123, 1.5, True])
def test_a_log_that_is_not_a_path_is_refused(log):
    with pytest.raises(ValueError, match=f"^log={log!r}: a file for the samples"):
        stoker.monitor(log=log)
