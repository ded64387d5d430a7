"""A Dataset whose items hold arrays or tensors it made (decoded, or transformed by its own
`transform`): without transforms= stoker.DataLoader batches them as torch's DataLoader does,
batch for batch, with nothing changed (_passthrough.py); an ImageFolder whose transform stoker
cannot read runs its own __getitem__ in Python."""
import json
import warnings

import numpy as np
import pytest
import torch
from torchvision import datasets
from torchvision import transforms as T
from PIL import Image

import stoker
from ranks import run_ranks


def _pixels(i, shape=(32, 48, 3)):
    """A uint8 image made from its index alone (the same on every call, in any process)."""
    return (np.arange(int(np.prod(shape))).reshape(shape) * (i + 3) % 253).astype(np.uint8)


class Items(torch.utils.data.Dataset):
    """(make(i), i) for 12 indices, through `transform` where one is given (as torchvision's Datasets)."""

    def __init__(self, make, transform=None):
        self.make, self.transform = make, transform

    def __len__(self):
        return 12

    def __getitem__(self, i):
        x = self.make(i)
        return (self.transform(x) if self.transform is not None else x), i


class Plain(torch.utils.data.Dataset):
    """(make(i), i) for 12 indices, with no `transform` attribute."""

    def __init__(self, make):
        self.make = make

    def __len__(self):
        return 12

    def __getitem__(self, i):
        return self.make(i), i


def _double(x):
    return x * 2


# The rows of the guide's table "a Dataset that makes its own arrays": what torch batches each as.
ROWS = {
    "uint8 (H, W, 3) array": lambda: Plain(_pixels),
    "uint8 (3, H, W) tensor from PILToTensor": lambda: Items(lambda i: Image.fromarray(_pixels(i)),
                                                             T.Compose([T.Resize((32, 32)), T.PILToTensor()])),
    "float32 (3, H, W) from the Dataset's own transform with a Lambda": lambda: Items(
        lambda i: Image.fromarray(_pixels(i)),
        T.Compose([T.ToTensor(), T.Normalize([0.5] * 3, [0.25] * 3), T.Lambda(_double)])),
    "float64 (T, D) array": lambda: Plain(lambda i: np.arange(35, dtype=np.float64).reshape(5, 7) / (i + 1)),
    "int64 (D,) array": lambda: Plain(lambda i: np.arange(6, dtype=np.int64) + i),
}


def _same_as_torch(dataset, **options):
    """Every batch of a pass equals torch's DataLoader's (values, dtype, shape)."""
    theirs = list(torch.utils.data.DataLoader(dataset, batch_size=4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = list(stoker.DataLoader(dataset, batch_size=4, **options))
    assert len(ours) == len(theirs)
    # A list, as torch's default_collate batches (image, target) items: `batch[0] = batch[0].cuda()` works.
    assert [type(batch) for batch in ours] == [type(batch) for batch in theirs] == [list] * len(theirs)
    for (x, y), (tx, ty) in zip(ours, theirs):
        assert (x.dtype, x.shape) == (tx.dtype, tx.shape)
        assert torch.equal(x, tx) and torch.equal(y, ty)


@pytest.mark.parametrize("row", list(ROWS))
def test_a_datasets_own_arrays_are_batched_as_torch_batches_them(row):
    _same_as_torch(ROWS[row](), num_workers=2)


@pytest.mark.parametrize("row", ["uint8 (H, W, 3) array", "float32 (3, H, W) from the Dataset's own transform "
                                 "with a Lambda"])
def test_dataset_processes_batch_them_as_torch_too(row):
    _same_as_torch(ROWS[row](), num_workers=2, dataset_processes=2)


def test_the_workers_stack_the_images_not_the_training_loops_thread(monkeypatch):
    """torch's worker processes collate a batch; stoker's worker threads stack it, so that the loop's
    thread copies no image (a batch of 64 float32 224x224 images: 200 ms of its CPU per batch)."""
    import threading

    import stoker._passthrough as passthrough
    import stoker.data_loader as data_loader

    threads = []

    def recorded(collate):
        def collate_images(*args):
            threads.append(threading.get_ident())
            return collate(*args)
        return collate_images

    monkeypatch.setattr(passthrough, "collate_images", recorded(passthrough.collate_images))
    monkeypatch.setattr(data_loader, "collate_images", recorded(data_loader.collate_images))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = [(x.clone(), y.clone()) for x, y in stoker.DataLoader(
            ROWS["float32 (3, H, W) from the Dataset's own transform with a Lambda"](), batch_size=4, num_workers=2)]
    theirs = list(torch.utils.data.DataLoader(
        ROWS["float32 (3, H, W) from the Dataset's own transform with a Lambda"](), batch_size=4))
    assert len(threads) == len(ours) == 3
    assert threading.get_ident() not in threads
    for (x, y), (tx, ty) in zip(ours, theirs):
        assert x.dtype == tx.dtype and torch.equal(x, tx) and torch.equal(y, ty)


def test_a_datasets_own_transform_is_said_once_with_how_to_go_faster():
    with pytest.warns(UserWarning) as said:
        stoker.DataLoader(ROWS["float32 (3, H, W) from the Dataset's own transform with a Lambda"](), batch_size=4)
    lines = [str(w.message) for w in said if "runs in Python" in str(w.message)]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "transform=None" in lines[0] and "transforms=" in lines[0]


class OpenClipCsv(torch.utils.data.Dataset):
    """open_clip's CsvDataset's shape: its transform under `transforms`, applied in __getitem__."""

    def __init__(self):
        self.transforms = T.Compose([T.ToTensor(), T.Normalize([0.5] * 3, [0.25] * 3)])

    def __len__(self):
        return 12

    def __getitem__(self, i):
        return self.transforms(_pixels(i)), torch.arange(4) + i


class OpenClipStream(torch.utils.data.IterableDataset):
    """The same items from __iter__, as a webdataset pipeline yields them."""

    def __init__(self):
        self.transform = OpenClipCsv().transforms

    def __iter__(self):
        return (OpenClipCsv()[i] for i in range(12))


@pytest.mark.parametrize("dataset,processes,where", [
    (OpenClipCsv(), 0, "in its __getitem__ on stoker's worker threads"),
    (OpenClipCsv(), 2, "in its __getitem__ in the dataset_processes worker processes"),
    (OpenClipStream(), 1, "in its __iter__ in the worker processes")])
def test_the_own_transform_line_names_open_clips_transforms_and_where_it_runs(dataset, processes, where):
    with pytest.warns(UserWarning) as said:
        stoker.DataLoader(dataset, batch_size=4, dataset_processes=processes)
    lines = [str(w.message) for w in said if "runs in Python" in str(w.message)]
    assert len(lines) == 1 and f"own transform (Compose) runs in Python, {where}, as torch's DataLoader" in lines[0]


def test_arrays_of_other_shapes_in_one_batch_are_one_line_naming_them():
    dataset = Plain(lambda i: _pixels(i, (32, 48, 3) if i != 2 else (40, 40, 3)))
    loader = stoker.DataLoader(dataset, batch_size=4, num_workers=1)
    with pytest.raises(ValueError) as caught:
        next(iter(loader))
    line = str(caught.value)
    assert "\n" not in line
    assert "Plain[0]'s is ndarray (32, 48, 3) uint8" in line and "Plain[2]'s is ndarray (40, 40, 3) uint8" in line
    assert "transforms=" in line


def test_a_collate_fn_that_pads_videos_of_each_their_length_makes_torchs_batch():
    # Videos of each their length, padded by the script's collate_fn as torch's DataLoader lets it.
    def pad(items):
        longest = max(len(video) for video, _ in items)
        return (torch.stack([torch.cat([v, v[-1:].expand(longest - len(v), *v.shape[1:])]) for v, _ in items]),
                torch.tensor([y for _, y in items]))

    dataset = Plain(lambda i: torch.from_numpy(_pixels(i, (5 + i, 8, 8, 3))))
    theirs = next(iter(torch.utils.data.DataLoader(dataset, batch_size=4, collate_fn=pad)))
    ours = next(iter(stoker.DataLoader(dataset, batch_size=4, collate_fn=pad)))
    assert theirs[0].shape == (4, 8, 8, 8, 3)
    assert torch.equal(ours[0], theirs[0]) and torch.equal(ours[1], theirs[1])


def test_transforms_given_make_uint8_arrays_images_stoker_transforms():
    dataset = Plain(_pixels)
    x, _ = next(iter(stoker.DataLoader(dataset, batch_size=4, transforms="Resize(16), CenterCrop(16)")))
    assert (x.dtype, tuple(x.shape)) == (torch.float32, (4, 3, 16, 16))


def test_a_chain_that_keeps_sizes_takes_arrays_of_one_size():
    x, _ = next(iter(stoker.DataLoader(Plain(_pixels), batch_size=4, transforms="none")))
    expected = torch.stack([torch.from_numpy(_pixels(i)).permute(2, 0, 1).float() / 255 for i in range(4)])
    assert x.dtype == torch.float32 and torch.allclose(x, expected)


def test_keypoints_on_pixels_the_dataset_moved_are_refused_in_one_line():
    class Moved(torch.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return torch.zeros(3, 8, 8), stoker.Keypoints(np.zeros((2, 2), np.float32))

    with pytest.raises(ValueError, match=r"stoker.Keypoints.*give transforms=") as caught:
        stoker.DataLoader(Moved(), batch_size=2)
    assert "\n" not in str(caught.value)


def test_setting_transforms_on_a_loader_that_passes_arrays_through_is_refused():
    loader = stoker.DataLoader(Plain(_pixels), batch_size=4)
    with pytest.raises(ValueError, match="made without transforms="):
        loader.transforms = "Resize(16), CenterCrop(16)"
    assert next(iter(loader))[0].dtype == torch.uint8


def test_an_image_folder_with_a_lambda_runs_its_own_getitem(png_folder):
    chain = T.Compose([T.Resize((24, 24)), T.ToTensor(), T.Lambda(_double)])
    folder = datasets.ImageFolder(str(png_folder), transform=chain)
    with pytest.warns(UserWarning, match=r"Lambda.*__getitem__ in Python"):
        stoker.DataLoader(folder, batch_size=4)
    _same_as_torch(folder, num_workers=2)


def test_a_lambda_given_as_transforms_for_a_path_is_still_refused(png_folder):
    with pytest.raises(ValueError, match="Lambda"):
        stoker.DataLoader(str(png_folder), batch_size=4, transforms=T.Compose([T.ToTensor(), T.Lambda(_double)]))


def test_a_distributed_sampler_gives_each_rank_torchs_batches(tmp_path):
    script = __file__.replace("test_passthrough.py", "passthrough_rank.py")
    outputs = run_ranks(script, 2)
    labels = []
    for out in outputs:
        lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert [line["same"] for line in lines] == [True, True], out
        labels.append(set(lines[0]["labels"]))
    assert not labels[0] & labels[1] and len(labels[0] | labels[1]) == 24


def test_dict_items_of_arrays_are_batched_as_torch_batches_them():
    class Tokens(torch.utils.data.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return {"input_ids": np.arange(5, dtype=np.int64) + i, "mask": np.ones((5, 2), np.int64), "label": i}

    theirs = next(iter(torch.utils.data.DataLoader(Tokens(), batch_size=4)))
    ours = next(iter(stoker.DataLoader(Tokens(), batch_size=4)))
    assert list(ours) == list(theirs)
    assert all(torch.equal(ours[k], theirs[k]) for k in theirs)


def test_a_folder_whose_transform_stoker_reads_is_still_read_in_cpp(png_folder):
    folder = datasets.ImageFolder(str(png_folder), transform=T.Compose([T.Resize(32), T.CenterCrop(32),
                                                                         T.ToTensor()]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loader = stoker.DataLoader(folder, batch_size=4)
    assert loader._data.targets == "engine"  # the files decoded and transformed in C++, no __getitem__ call


def through_the_device_feed(dataset, **options):
    """A pass's batches through DeviceFeed, the feed device="cuda" uses, here in host memory
    (test_gpu_decode's HostCuda), and torch's DataLoader's batches of the same options."""
    from stoker import device_feed
    from test_gpu_decode import HostCuda

    loader = stoker.DataLoader(dataset, num_workers=1, **options)
    feed = device_feed.DeviceFeed(loader._loader, "cpu", False, loader._targets, loader._params, cuda=HostCuda())
    it = iter(loader)  # starts the pass
    feed.start()
    got = []
    while (item := feed.next()) is not None:
        got.append(loader._shaped(item))
    del it
    return got, list(torch.utils.data.DataLoader(dataset, **options))


def test_the_device_feed_carries_passed_arrays_with_the_targets():
    # device="cuda" feeds the batches through DeviceFeed; here in host memory (test_gpu_decode's HostCuda).
    dataset = Plain(_pixels)
    got, theirs = through_the_device_feed(dataset, batch_size=4)
    assert len(got) == len(theirs)
    for (x, y), (tx, ty) in zip(got, theirs):
        assert x.dtype == tx.dtype and torch.equal(x, tx) and torch.equal(y, ty)


class Pairs(torch.utils.data.Dataset):
    """A CLIP fine-tune's rows after the Dataset's own transform, as Hugging Face's contrastive
    image-text example's processor makes them: pixel values, token ids and their mask as lists."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        ids = [49406, 320 + i, 1929, 49407, 0, 0]
        return {"pixel_values": torch.from_numpy(_pixels(i)).permute(2, 0, 1).float() / 255, "input_ids": ids,
                "attention_mask": [int(t != 0) for t in ids]}


def hf_collate_fn(examples):  # the example's own
    pixel_values = torch.stack([example["pixel_values"] for example in examples])
    input_ids = torch.tensor([example["input_ids"] for example in examples], dtype=torch.long)
    attention_mask = torch.tensor([example["attention_mask"] for example in examples], dtype=torch.long)
    return {"pixel_values": pixel_values, "input_ids": input_ids, "attention_mask": attention_mask, "return_loss": True}


def mixup_collate_fn(batch):  # torchvision's references' shape: the whole (image, target) samples, collated
    images, targets = torch.utils.data.default_collate(batch)
    return images.flip(0) * 0.5 + images * 0.5, targets


@pytest.mark.parametrize("processes", [0, 2])
@pytest.mark.parametrize("dataset,collate_fn", [(Pairs(), hf_collate_fn), (Plain(_pixels), mixup_collate_fn),
                                                (ROWS["float64 (T, D) array"](), mixup_collate_fn)])
def test_collate_fn_gets_the_whole_items_as_torchs_does(dataset, collate_fn, processes):
    theirs = list(torch.utils.data.DataLoader(dataset, batch_size=4, collate_fn=collate_fn))
    ours = list(stoker.DataLoader(dataset, batch_size=4, collate_fn=collate_fn, num_workers=2,
                                  dataset_processes=processes))
    assert len(ours) == len(theirs) and all(_same(got, expected) for got, expected in zip(ours, theirs))


def _same(got, expected):
    """Equal batches: the same structure, tensors of the same dtype, shape and values."""
    if isinstance(expected, torch.Tensor):
        return type(got) is torch.Tensor and got.dtype == expected.dtype and torch.equal(got, expected)
    if isinstance(expected, dict):
        return type(got) is type(expected) and list(got) == list(expected) and all(_same(got[k], expected[k])
                                                                                  for k in expected)
    if isinstance(expected, (tuple, list)):
        return type(got) is type(expected) and len(got) == len(expected) and all(map(_same, got, expected))
    return got == expected


class Batches(torch.utils.data.IterableDataset):
    """open_clip's webdataset pipeline's shape: it batches its own samples (wds.batched), each
    process its share, for a loader with batch_size=None (its WebLoader's)."""

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        for b in range(info.id if info else 0, 6, info.num_workers if info else 1):
            images = torch.stack([torch.from_numpy(_pixels(4 * b + k)).permute(2, 0, 1).float() / 255
                                  for k in range(4)])
            yield images, torch.arange(4 * b, 4 * b + 4).repeat(7, 1).T  # token ids (4, 7)

    def __len__(self):
        return 6


@pytest.mark.parametrize("dataset,options", [(Batches(), dict(dataset_processes=2)),
                                             (Plain(_pixels), dict(shuffle=False)),
                                             (Plain(_pixels), dict(dataset_processes=2, collate_fn=mixup_collate_fn))])
def test_batch_size_none_gives_each_item_as_its_batch_as_torchs_does(dataset, options):
    torch_options = dict(num_workers=options.get("dataset_processes", 0), collate_fn=options.get("collate_fn"))
    if torch_options["collate_fn"] is not None:
        torch_options["collate_fn"] = lambda item: mixup_collate_fn([item])
        options = dict(options, collate_fn=torch_options["collate_fn"])
    theirs = list(torch.utils.data.DataLoader(dataset, batch_size=None, **torch_options))
    loader = stoker.DataLoader(dataset, batch_size=None, num_workers=2, **options)
    ours = list(loader)  # a Dataset's own tensors: no buffer of the loader's held
    assert (loader.batch_size, len(loader)) == (None, len(theirs))
    assert len(ours) == len(theirs) and all(_same(got, expected) for got, expected in zip(ours, theirs))


def test_batch_size_none_where_stoker_batches_the_images_itself_is_one_line(png_folder):
    with pytest.raises(ValueError, match=r"^batch_size=None: .*give batch_size=N") as raised:
        stoker.DataLoader(str(png_folder), batch_size=None)
    assert "\n" not in str(raised.value)
    with pytest.raises(ValueError, match="batch_size=None .* drop_last"):
        stoker.DataLoader(Plain(_pixels), batch_size=None, drop_last=True)


@pytest.mark.parametrize("dataset,options", [(Pairs(), dict(batch_size=4, collate_fn=hf_collate_fn)),
                                             (Batches(), dict(batch_size=None))])
def test_the_device_feed_carries_what_collate_fn_makes_of_the_whole_items(dataset, options):
    # As test_the_device_feed_carries_passed_arrays_with_the_targets, for collate_fn's batches.
    got, theirs = through_the_device_feed(dataset, **options)
    assert len(got) == len(theirs) and all(_same(a, b) for a, b in zip(got, theirs))
