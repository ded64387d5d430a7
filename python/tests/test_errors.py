"""Bad arguments are one ValueError line; bad samples follow on_error; Ctrl-C ends a wait."""
import os
import signal
import traceback

import numpy as np
import pytest
import torch
from conftest import write_image_folder
from PIL import Image

import stoker


@pytest.mark.parametrize("kwargs, words", [
    (dict(batch_size=0), "batch_size=0: a whole number from 1"),
    (dict(batch_size=True), "batch_size=True"),
    (dict(num_workers=-1), "num_workers=-1"),
    (dict(num_workers="many"), "or 'auto'"),
    (dict(prefetch_factor=0), "prefetch_factor=0"),
    (dict(shuffle="yes"), "shuffle='yes': True or False"),
    (dict(on_error="skip"), "on_error='skip': one of 'substitute', 'raise'"),
    (dict(max_bad=2), "max_bad=2: a number from 0 to 1"),
    (dict(rank=3, world_size=2), "rank=3: a whole number from 0 to 1"),
    (dict(world_size=0), "world_size=0"),
    (dict(device="tpu"), "device='tpu'"),
    (dict(transforms="RandomResizedCrop(224), Flip"), "transforms="),
    (dict(transforms=[1, 2]), "a list of strings"),
    (dict(transforms="Normalize"), "neither resizes nor crops, so it needs images of one size"),
    (dict(cache_decoded_gb=-1), "cache_decoded_gb=-1"),
])
def test_a_bad_argument_names_itself(png_folder, kwargs, words):
    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(png_folder, **kwargs)
    assert words in str(raised.value)
    assert "\n" not in str(raised.value)
    # The half-made loader a traceback or a debugger shows has a repr, not an error of its own.
    half_made = {id(frame.f_locals["self"]): frame.f_locals["self"] for frame, _ in traceback.walk_tb(raised.tb)
                 if isinstance(frame.f_locals.get("self"), stoker.DataLoader)}
    assert [repr(loader) for loader in half_made.values()] == ["stoker.DataLoader(<not made: its construction "
                                                               "raised>)"]


class _Paths:
    """A Dataset of image paths: its items are the script's, made afresh each epoch."""

    def __init__(self, root):
        self.paths = sorted(str(p) for p in root.rglob("*.png"))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.paths[i], 0


def test_a_decoded_cache_that_cannot_be_kept_is_refused_not_left_off(png_folder):
    """The cache keeps a path's images alone: asked for with a Dataset object's items or with
    keypoints, it is one line, where it used to be left off without a word."""
    n = len(_Paths(png_folder))
    for dataset, extra in ((_Paths(png_folder), {}), (png_folder, dict(keypoints=np.zeros((n, 2, 2), np.float32)))):
        with pytest.raises(ValueError) as raised:
            stoker.DataLoader(dataset, cache_decoded_gb=1, transforms="Resize((8, 8))", **extra)
        assert str(raised.value).startswith("cache_decoded_gb=1: 0 with ")
        assert "\n" not in str(raised.value)
    stoker.DataLoader(png_folder, cache_decoded_gb=1, transforms="Resize((8, 8))")  # a path's images: kept


def test_missing_data_is_one_line(tmp_path):
    with pytest.raises(stoker.DataError, match=str(tmp_path / "nowhere")):
        stoker.DataLoader(tmp_path / "nowhere")


@pytest.fixture()
def folder_with_a_bad_file(tmp_path):
    for c in ("a", "b"):
        (tmp_path / c).mkdir()
        for i in range(6):
            Image.fromarray(np.full((20, 20, 3), 40 * i, np.uint8)).save(tmp_path / c / f"{i}.png")
    bad = tmp_path / "b" / "3.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"broken" * 10)
    return tmp_path, bad


def test_a_bad_sample_is_substituted_and_named(folder_with_a_bad_file):
    root, bad = folder_with_a_bad_file
    loader = stoker.DataLoader(root, batch_size=4, transforms="Resize((8, 8))", max_bad=0.2)
    assert sum(x.shape[0] for x, _ in loader) == 12
    stats = loader.stats()
    assert stats["bad"] == 1
    assert stats["bad_samples"][0]["path"] == str(bad)
    assert stats["bad_samples"][0]["reason"]


class _RaisesAt(torch.utils.data.Dataset):
    """A Dataset whose __getitem__ has a bug for some items, as a script's may."""

    def __init__(self, bad):
        self.bad = bad

    def __len__(self):
        return 200

    def __getitem__(self, i):
        if i in self.bad:
            raise KeyError(f"no landmarks for {i}")
        return torch.full((3,), float(i)), i


def _warnings_of_a_pass(loader, passes=2):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(passes):
            for _ in loader:
                pass
    return [str(w.message) for w in caught if "bad sample" in str(w.message)]


@pytest.mark.parametrize("processes", [None, 2])
def test_the_first_substituted_sample_of_a_dataset_is_one_warning_line(processes):
    loader = stoker.DataLoader(_RaisesAt({37, 150}), batch_size=8, num_workers=2, dataset_processes=processes)
    lines = _warnings_of_a_pass(loader)
    assert len(lines) == 1, lines  # once per loader, not per sample or per pass
    assert "_RaisesAt[37]: raised KeyError: 'no landmarks for 37'" in lines[0]
    assert "test_errors.py" in lines[0] and "on_error='raise'" in lines[0]
    assert loader.stats()["bad"] == 2


def test_a_substituted_file_is_one_warning_line_and_a_clean_pass_none(folder_with_a_bad_file, png_folder):
    root, bad = folder_with_a_bad_file
    lines = _warnings_of_a_pass(stoker.DataLoader(root, batch_size=4, transforms="Resize((8, 8))", max_bad=0.2))
    assert len(lines) == 1 and str(bad) in lines[0]
    assert _warnings_of_a_pass(stoker.DataLoader(png_folder, batch_size=4, transforms="Resize((8, 8))")) == []
    assert _warnings_of_a_pass(stoker.DataLoader(_RaisesAt(set()), batch_size=8, num_workers=2)) == []


def test_on_error_raise_names_the_file(folder_with_a_bad_file):
    root, bad = folder_with_a_bad_file
    loader = stoker.DataLoader(root, batch_size=4, transforms="Resize((8, 8))", on_error="raise")
    with pytest.raises(stoker.DataError, match=str(bad)):
        for _ in loader:
            pass


@pytest.mark.parametrize("kwargs, says", [
    (dict(on_error="raise"), r"\(on_error='raise'; on_error='substitute' replaces bad samples\)$"),
    (dict(max_bad=0.0), r"over the limit max_bad=0%; first: .*, leave them out of the data or the sampler "
                        r"\(stats\(\)\['bad_samples'\] names them; stoker scan -o bad.txt lists all of a path's\), "
                        r"or raise max_bad$"),
])
def test_a_stop_for_bad_samples_speaks_pythons_names(folder_with_a_bad_file, kwargs, says):
    root, bad = folder_with_a_bad_file
    loader = stoker.DataLoader(root, batch_size=4, transforms="Resize((8, 8))", **kwargs)
    with pytest.raises(stoker.DataError, match=says) as e:
        for _ in loader:
            pass
    assert "--" not in str(e.value) and "max_bad_fraction" not in str(e.value) and "=fail" not in str(e.value)


def test_ctrl_c_ends_a_wait_for_a_slow_batch(tmp_path):
    (tmp_path / "a").mkdir()
    big = np.random.default_rng(0).integers(0, 255, (2500, 2500, 3), dtype=np.uint8)
    # A batch that takes one worker well over a second, however idle the machine: one noisy
    # 2500-px PNG (slow to encode), under 12 names.
    Image.fromarray(big).save(tmp_path / "a" / "0.png", compress_level=1)
    for i in range(1, 12):
        os.link(tmp_path / "a" / "0.png", tmp_path / "a" / f"{i}.png")
    loader = stoker.DataLoader(tmp_path, batch_size=12, num_workers=1, transforms="Resize((2000, 2000))")
    it = iter(loader)
    # Python keeps SIGINT ignored when it starts with it ignored (a job a shell ran in the
    # background): Ctrl-C's handler is set here, as an interactive Python has it.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    previous = signal.signal(signal.SIGALRM, lambda *_: signal.raise_signal(signal.SIGINT))
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            next(it)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        signal.signal(signal.SIGINT, previous_int)
    # Raised inside the wait, the batch still to come: the pass goes on and delivers it. A Ctrl-C
    # seen only once next() had returned would have lost it (the pass's one batch).
    images, _ = next(it)
    assert len(images) == 12


@pytest.mark.parametrize("split, says", [
    ("val", r"^no split 'val' in .*/train \(an image folder\).*holds one split.*\(there is .*/val beside it\)"),
    ("t10k", r"^no split 't10k' in .*/train \(an image folder\)"),
    ("garbage", r"^unknown split 'garbage': stoker reads train, val and test \(t10k\), and .*/train \(an image folder\)"),
    (None, r"^split=None: a split's name: 'train', 'val' or 'test'"),
])
def test_a_split_the_data_does_not_hold_is_refused(tmp_path, split, says):
    # A folder holds one split: asking it for another gave the training images back.
    train = write_image_folder(tmp_path / "train", classes=2, per_class=2)
    write_image_folder(tmp_path / "val", classes=2, per_class=1)
    with pytest.raises(ValueError, match=says) as e:
        stoker.DataLoader(train, split=split)
    assert "\n" not in str(e.value)


def test_idx_splits_are_train_and_test(tmp_path):
    data = "/usr/share/datasets/fashion-mnist"
    if not (os.path.isdir(data) and os.listdir(data)):
        pytest.skip("Debian's dataset-fashion-mnist is not installed")
    assert len(stoker.DataLoader(data, split="test", batch_size=1000)) == 10
    with pytest.raises(ValueError, match="IDX data has no val split"):
        stoker.DataLoader(data, split="val")


def test_gpu_decoding_is_refused_in_one_line_saying_why(png_folder):
    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(png_folder, decode="gpu")
    assert str(raised.value) == ("decode='gpu': GPU decoding needs the batches on a CUDA device (device='cuda'); "
                                 "use decode='cpu'")
    with pytest.raises(ValueError, match="^decode='GPU': one of 'cpu', 'gpu', 'auto'; "):
        stoker.DataLoader(png_folder, decode="GPU")


def test_auto_decoding_with_batches_on_the_cpu_is_the_cpu_and_quiet(png_folder, capfd):
    loader = stoker.DataLoader(png_folder, decode="auto", batch_size=2, transforms="Resize((8, 8))")
    assert loader.decode == "cpu"
    assert next(iter(loader))[0].shape == (2, 3, 8, 8)
    assert "decode" not in capfd.readouterr().err


@pytest.mark.parametrize("name, value", [("batch_size", 8), ("drop_last", True), ("shuffle", True),
                                         ("num_workers", 3), ("pin_memory", True), ("worker_init_fn", print),
                                         ("dataset", _Paths)])
def test_an_option_taken_when_the_loader_was_made_is_refused_as_an_attribute(png_folder, name, value):
    loader = stoker.DataLoader(png_folder, batch_size=4, transforms="Resize((8, 8))")
    with pytest.raises(ValueError, match=rf"^loader\.{name}=.*: stoker\.DataLoader takes {name} when it is made .*; "
                                         rf"make a new stoker\.DataLoader\(\.\.\., {name}=\.\.\.\)$"):
        setattr(loader, name, value)
    assert getattr(loader, name) is not value


def test_collate_fn_and_generator_set_later_reach_the_next_batches(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=4, transforms="Resize((8, 8))")
    loader.collate_fn = lambda targets: ("collated", len(targets))
    loader.generator = torch.Generator()
    assert next(iter(loader))[1] == ("collated", 4)
