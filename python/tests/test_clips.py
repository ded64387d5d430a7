"""frames_per_clip: each sample is K frames of a clip (a folder per clip, a CSV list of frames,
or a Dataset whose image is a list of frames), transformed alike and batched as
(N, K, C, H, W)."""
import os
import re

import numpy as np
import pytest
import torch
import torchvision.transforms as T
from conftest import assert_same_batches, batches
from PIL import Image

import stoker

RANDOM = "RandomResizedCrop(24, scale=(0.3, 1.0)), RandomHorizontalFlip(), ColorJitter(0.4, 0.4, 0.4), Normalize"


def frame_pixels(clip, k, h=36, w=44):
    """Frame k of clip `clip`: smooth, and different for every frame."""
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * 4 + clip * 30) % 256, (y * 5 + k * 25) % 256, (x + y + 7 * k) % 256], axis=-1)
    return base.astype(np.uint8)


def write_clips(root, clips=6, frames=(5, 7, 6, 8, 5, 9)):
    """root/<class>/clip<i>/frame_<k>.png, clip i in class i % 2; returns [(frame paths, class)]."""
    out = []
    for i in range(clips):
        folder = root / f"class_{i % 2}" / f"clip{i}"
        folder.mkdir(parents=True)
        paths = []
        for k in range(frames[i]):
            path = folder / f"frame_{k}.png"  # frame_10 after frame_9: natural order
            Image.fromarray(frame_pixels(i, k)).save(path)
            paths.append(str(path))
        out.append((paths, i % 2))
    # The folder's order: class_0's clips, then class_1's.
    return sorted(out, key=lambda c: (c[1], c[0][0]))


@pytest.fixture(scope="module")
def clip_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("clips") / "train"
    return root, write_clips(root)


class ClipItems(torch.utils.data.Dataset):
    """A script's Dataset: (frames, class id), each frame as `kind` makes it."""

    def __init__(self, clips, kind):
        self.clips = clips
        self.kind = kind

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, i):
        paths, target = self.clips[i]
        if self.kind == "paths":
            return list(paths), target
        if self.kind == "numpy paths":  # as `frames[np.linspace(0, n - 1, K).astype(int)]` picks them
            return np.array(paths), target
        arrays = [np.asarray(Image.open(p).convert("RGB")) for p in paths]
        if self.kind == "arrays":
            return tuple(arrays), target
        if self.kind == "pil":
            return [Image.open(p) for p in paths], target
        if self.kind == "video":  # one uint8 array (T, H, W, C)
            return np.stack(arrays), target
        raise AssertionError(self.kind)


def test_a_folder_of_clip_folders_gives_n_k_c_h_w_batches(clip_folder):
    root, clips = clip_folder
    loader = stoker.DataLoader(root, batch_size=4, frames_per_clip=3, frame_step=2,
                               transforms="Resize((20, 24)), ToUint8", return_params=True)
    assert len(loader.dataset) == 6
    x, y, params = next(iter(loader))
    assert x.shape == (4, 3, 3, 20, 24) and x.dtype == torch.uint8
    assert y.tolist() == [c for _, c in clips[:4]]
    # Unshuffled: the centre of each clip (span 5), one set of draws per clip.
    for s in range(4):
        count = len(clips[s][0])
        start = (count - 5) // 2
        assert params["frames"][s].tolist() == [start, start + 2, start + 4]
        for k, frame in enumerate(params["frames"][s].tolist()):
            made = Image.open(clips[s][0][frame]).resize((24, 20), Image.BILINEAR)
            expected = torch.from_numpy(np.array(made)).permute(2, 0, 1).int()
            assert (x[s, k].int() - expected).abs().max() <= 1, (s, k)
    assert params["hflip"].shape == (4,)


def test_training_draws_a_start_and_shares_the_draws_across_frames(tmp_path):
    # Every frame of a clip the same image: under a random chain, K identical outputs.
    for i in range(4):
        for k in range(6):
            folder = tmp_path / "c" / f"clip{i}"
            folder.mkdir(parents=True, exist_ok=True)
            Image.fromarray(frame_pixels(i, 0)).save(folder / f"{k}.png")
    loader = stoker.DataLoader(tmp_path, batch_size=4, shuffle=True, seed=3, frames_per_clip=4,
                               transforms=RANDOM, return_params=True)
    starts = set()
    for epoch in range(3):
        for x, y, params in loader:
            assert torch.equal(x, x[:, :1].expand_as(x))
            starts.update(params["frames"][:, 0].tolist())
    assert starts <= {0, 1, 2} and len(starts) > 1


def test_a_csv_list_of_frames_gives_the_folders_batches(clip_folder, tmp_path):
    root, clips = clip_folder
    csv = tmp_path / "clips.csv"
    csv.write_text("path,label\n" + "".join("|".join(paths) + f",{c}\n" for paths, c in clips))
    options = dict(batch_size=4, shuffle=True, seed=5, frames_per_clip=3, transforms=RANDOM)
    expected = batches(stoker.DataLoader(root, **options))
    assert_same_batches(batches(stoker.DataLoader(csv, **options)), expected)


def test_a_csv_list_of_clip_folders_gives_the_folders_batches(clip_folder, tmp_path):
    # Videos kept as a folder of frames each, listed with their labels: `videos/vid_0001,1`.
    root, clips = clip_folder
    csv = tmp_path / "videos.csv"
    csv.write_text("video,label\n" + "".join(f"{os.path.dirname(paths[0])},{c}\n" for paths, c in clips))
    options = dict(batch_size=4, shuffle=True, seed=5, frames_per_clip=3, frame_step=2, transforms=RANDOM)
    assert_same_batches(batches(stoker.DataLoader(csv, **options)), batches(stoker.DataLoader(root, **options)))
    with pytest.raises(ValueError, match=r"holds clips \(samples of several frames\); choose the frames"):
        stoker.DataLoader(csv)


@pytest.mark.parametrize("kind", ["paths", "numpy paths", "arrays", "pil", "video"])
def test_a_dataset_returning_a_list_of_frames_gives_the_folders_batches(clip_folder, kind):
    root, clips = clip_folder
    options = dict(batch_size=3, shuffle=True, seed=8, frames_per_clip=4, frame_step=1, transforms=RANDOM)
    expected = batches(stoker.DataLoader(root, **options))
    loader = stoker.DataLoader(ClipItems(clips, kind), num_workers=2, **options)
    got = batches(loader)
    assert_same_batches(got, expected)


@pytest.mark.parametrize("given", ["folder", "dataset"])
def test_stats_counts_the_epochs_clips_shorter_than_their_span(clip_folder, given):
    root, clips = clip_folder
    data = root if given == "folder" else ClipItems(clips, "paths")
    loader = stoker.DataLoader(data, batch_size=2, num_workers=2, frames_per_clip=4, frame_step=2,
                               transforms="Resize((20, 24)), ToUint8")
    short = sum(len(paths) < 7 for paths, _ in clips)  # span (4 - 1) * 2 + 1 = 7
    assert short == 3
    for epoch in range(2):
        for _ in loader:
            pass
        assert loader.stats()["short_clips"] == short, epoch


def test_a_dataset_of_clips_is_the_same_for_one_and_three_workers(clip_folder):
    _, clips = clip_folder
    options = dict(batch_size=2, shuffle=True, seed=1, frames_per_clip=2, frame_step=3, transforms=RANDOM)
    one = batches(stoker.DataLoader(ClipItems(clips, "paths"), num_workers=1, **options))
    assert_same_batches(batches(stoker.DataLoader(ClipItems(clips, "paths"), num_workers=3, **options)), one)


def test_a_sampler_that_shuffles_draws_random_clips(clip_folder):
    # Training on several ranks: DistributedSampler(shuffle=True), and shuffle left out as torch asks.
    _, clips = clip_folder
    dataset = ClipItems(clips, "paths")
    sampler = torch.utils.data.DistributedSampler(dataset, num_replicas=1, rank=0, shuffle=True)
    loader = stoker.DataLoader(dataset, batch_size=6, sampler=sampler, frames_per_clip=2, seed=0,
                               transforms="Resize((8, 8))", return_params=True)
    assert loader.clip_start == "random"
    starts = {}
    for epoch in range(4):
        sampler.set_epoch(epoch)
        for _, _, params in loader:
            for index, frames in zip(params["index"].tolist(), params["frames"].tolist()):
                starts.setdefault(index, set()).add(frames[0])
    assert sum(len(s) > 1 for s in starts.values()) >= 3, starts


SAMPLERS = [
    (lambda d: torch.utils.data.DistributedSampler(d, num_replicas=2, rank=1, shuffle=True), "random"),
    (lambda d: torch.utils.data.RandomSampler(d), "random"),
    (lambda d: torch.utils.data.SubsetRandomSampler([0, 2, 4]), "random"),
    (lambda d: torch.utils.data.WeightedRandomSampler([1.0] * len(d), len(d)), "random"),
    (lambda d: torch.utils.data.DistributedSampler(d, num_replicas=2, rank=1, shuffle=False), "center"),
    (lambda d: torch.utils.data.SequentialSampler(d), "center"),
]


def test_frames_of_a_mode_the_chain_does_not_carry_are_refused_as_single_images_are(clip_folder):
    _, clips = clip_folder

    class Rgba(ClipItems):
        def __getitem__(self, i):
            return [Image.open(p).convert("RGBA") for p in self.clips[i][0]], self.clips[i][1]

    with pytest.raises(ValueError, match=r"^dataset: frame 0 of Rgba\[0\]'s clip is a PIL image of mode RGBA, whose "
                                         r"channels stoker's chain does not carry .* image\.convert\(\"RGB\"\)"):
        stoker.DataLoader(Rgba(clips, "pil"), frames_per_clip=2, transforms="Resize((8, 8))")


def test_the_returned_params_redo_every_frame_with_torchvisions_functional(clip_folder):
    # A face-clip script checks its augmentation: each frame recropped, flipped and jittered by the clip's params.
    import torchvision.transforms.functional as F

    _, clips = clip_folder
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    chain = T.Compose([T.RandomResizedCrop(24, scale=(0.4, 1)), T.RandomHorizontalFlip(),
                       T.ColorJitter(0.3, 0.3, 0.3, 0.05), T.ToTensor(), T.Normalize(mean, std)])
    loader = stoker.DataLoader(ClipItems(clips, "pil"), batch_size=3, shuffle=True, seed=4, frames_per_clip=3,
                               frame_step=2, transforms=chain, return_params=True)
    flips = set()
    for x, _, params in loader:
        for s in range(len(x)):
            factors = params["color"][s].tolist()
            adjust = [F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue]
            flips.add(bool(params["hflip"][s]))
            for k, frame in enumerate(params["frames"][s].tolist()):
                left, top, width, height = (round(v) for v in params["box"][s, k].tolist())
                image = Image.open(clips[int(params["index"][s])][0][frame]).convert("RGB")
                image = F.resized_crop(image, top, left, height, width, [24, 24])
                pixels = F.to_tensor(F.hflip(image) if params["hflip"][s] else image)
                for step in params["color_order"][s].tolist():
                    pixels = adjust[step](pixels, factors[step])
                expected = F.normalize(pixels, mean, std)
                levels = (x[s, k] - expected).abs() * torch.tensor(std).view(3, 1, 1) * 255
                assert levels.mean() < 1 and levels.max() <= 3, (s, k, levels.mean(), levels.max())
    assert flips == {False, True}


@pytest.mark.parametrize("make, start", SAMPLERS)
def test_clip_start_follows_the_samplers_order(clip_folder, make, start):
    dataset = ClipItems(clip_folder[1], "paths")
    options = dict(frames_per_clip=2, transforms="Resize((8, 8))")
    assert stoker.DataLoader(dataset, sampler=make(dataset), **options).clip_start == start
    batches = torch.utils.data.BatchSampler(make(dataset), batch_size=2, drop_last=False)
    assert stoker.DataLoader(dataset, batch_sampler=batches, **options).clip_start == start
    other = "center" if start == "random" else "random"
    assert stoker.DataLoader(dataset, sampler=make(dataset), clip_start=other, **options).clip_start == other


def test_a_sampler_of_another_kind_asks_for_clip_start(clip_folder):
    root, _ = clip_folder
    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(root, sampler=[0, 2, 1], frames_per_clip=2)
    assert str(raised.value) == ("clip_start=None: with sampler=list, stoker cannot tell whether the order is drawn at "
                                 "random (training) or not (evaluation); pass clip_start='random' (a random clip of "
                                 "each sample) or clip_start='center' (the centre clip)")
    assert stoker.DataLoader(root, sampler=[0, 2, 1], frames_per_clip=2, clip_start="center").clip_start == "center"
    assert stoker.DataLoader(root, sampler=[0, 2, 1]).clip_start == "center"  # single images: no clips to start


@pytest.mark.parametrize("dtype_chain, dtype", [(", ToUint8", torch.uint8), (", Float16", torch.float16),
                                                ("", torch.float32)])
def test_channels_last_gives_each_frame_channels_last_strides(clip_folder, dtype_chain, dtype):
    root, _ = clip_folder
    loader = stoker.DataLoader(root, batch_size=2, frames_per_clip=3, channels_last=True,
                               transforms="Resize((16, 20))" + dtype_chain)
    x, _ = next(iter(loader))
    n, k, c, h, w = x.shape
    assert (n, k, c, h, w) == (2, 3, 3, 16, 20) and x.dtype == dtype
    assert x.stride() == (k * h * w * c, h * w * c, 1, w * c, c)
    plain, _ = next(iter(stoker.DataLoader(root, batch_size=2, frames_per_clip=3,
                                           transforms="Resize((16, 20))" + dtype_chain)))
    assert plain.is_contiguous() and torch.equal(plain, x)


def test_frames_of_each_their_size_are_resized_first_by_a_resize_to_h_w(clip_folder):
    # A deepfake detector's face crops, one per frame as the detector saved them, each its own size.
    import torchvision.transforms.functional as F

    _, clips = clip_folder

    class FaceCrops(ClipItems):
        def __getitem__(self, i):
            paths, target = self.clips[i]
            return [Image.open(p).convert("RGB").crop((k % 3, 0, 40 + 2 * (k % 2), 30 + k % 3))
                    for k, p in enumerate(paths)], target

    chain = "Resize((20, 24)), RandomHorizontalFlip(), ToUint8"
    loader = stoker.DataLoader(FaceCrops(clips, "pil"), batch_size=6, shuffle=True, seed=2, frames_per_clip=3,
                               frame_step=1, transforms=chain, return_params=True, max_bad=0)
    flips = set()
    for x, _, params in loader:
        assert loader.stats()["bad_samples"] == []
        for s in range(len(x)):
            items = FaceCrops(clips, "pil")[int(params["index"][s])][0]
            flips.add(bool(params["hflip"][s]))
            for k, frame in enumerate(params["frames"][s].tolist()):
                made = F.resize(items[frame], [20, 24])
                expected = F.pil_to_tensor(F.hflip(made) if params["hflip"][s] else made)
                assert (x[s, k].int() - expected.int()).abs().max() <= 1, (s, k)
    assert flips == {False, True}


@pytest.mark.parametrize("kwargs, words", [
    (dict(frames_per_clip=-1), "frames_per_clip=-1: a whole number from 0 to 1024"),
    (dict(frames_per_clip=2.0), "frames_per_clip=2.0"),
    (dict(frames_per_clip=2, frame_step=0), "frame_step=0: a whole number from 1 to 1024"),
    (dict(frames_per_clip=2, clip_start="middle"), "clip_start='middle': one of 'random', 'center'"),
    (dict(frames_per_clip=2, cache_decoded_gb=1), "cache_decoded_gb=1: 0 with frames_per_clip (it keeps single"),
])
def test_a_bad_clip_argument_names_itself(clip_folder, kwargs, words):
    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(clip_folder[0], **kwargs)
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_clips_and_images_are_not_mixed_up(clip_folder, png_folder, tmp_path):
    root, clips = clip_folder
    with pytest.raises(stoker.DataError, match="lies in a class folder, outside any clip folder"):
        stoker.DataLoader(png_folder, frames_per_clip=2)
    csv = tmp_path / "clips.csv"
    csv.write_text("".join("|".join(paths) + f",{c}\n" for paths, c in clips))
    with pytest.raises(ValueError, match=r"holds clips \(samples of several frames\); choose the frames of each "
                                         r"with frames_per_clip=K"):
        stoker.DataLoader(csv, transforms="Resize((8, 8))")
    with pytest.raises(ValueError, match="a clip's frames is read with frames_per_clip=K"):
        stoker.DataLoader(ClipItems(clips, "paths"))
    single = [(paths[0], c) for paths, c in clips]

    class Images(torch.utils.data.Dataset):  # items (image, target), as for single images
        def __len__(self):
            return len(single)

        def __getitem__(self, i):
            return single[i]

    with pytest.raises(ValueError, match=r"frame 1 of Images\[0\]'s clip is a int; .*read as a clip alone"):
        stoker.DataLoader(Images(), frames_per_clip=2)
    with pytest.raises(ValueError, match=r"frames_per_clip=2 reads clips, and file list .* holds single images"):
        (tmp_path / "images.csv").write_text("".join(f"{p},{c}\n" for p, c in single))
        stoker.DataLoader(tmp_path / "images.csv", frames_per_clip=2)


def test_a_dataset_that_transforms_its_clips_itself_is_told_what_to_do(clip_folder):
    # torch's way: the Dataset picks the frames, stacks them and transforms the (K, C, H, W) clip.
    _, clips = clip_folder

    class Transformed(ClipItems):
        transform = T.Compose([T.ConvertImageDtype(torch.float), T.Normalize((0.5,) * 3, (0.2,) * 3)])

        def __getitem__(self, i):
            frames, target = super().__getitem__(i)
            clip = torch.stack([torch.tensor(f).permute(2, 0, 1) for f in frames[:2]])
            return self.transform(clip), target

    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(Transformed(clips, "arrays"), frames_per_clip=2)
    assert str(raised.value) == (
        "dataset: frame 0 of Transformed[0]'s clip is an array of float32, not uint8; expected a path, encoded bytes "
        "(bytes, or a 1-D uint8 array), a uint8 array ((H, W), (H, W, C) or (C, H, W)) or a PIL image; the Dataset transforms its images itself: "
        "make it with transform=None (return the image as loaded) and give the transform to "
        "stoker.DataLoader(transforms=...), which runs it in C++")


def test_an_item_that_is_not_a_clip_is_a_bad_sample(clip_folder):
    _, clips = clip_folder

    class SometimesOne(ClipItems):
        def __getitem__(self, i):
            paths, target = self.clips[i]
            return (paths, target) if i != 2 else paths[0]

    loader = stoker.DataLoader(SometimesOne(clips, "paths"), batch_size=6, frames_per_clip=2,
                               transforms="Resize((8, 8))", max_bad=1)
    next(iter(loader))
    (bad,) = loader.stats()["bad_samples"]
    assert bad["path"] == "SometimesOne[2]"
    assert bad["reason"].startswith("the clip is a str; expected a list or tuple of frames")


def test_a_missing_frame_and_a_damaged_one_are_named_alike(clip_folder, tmp_path):
    _, clips = clip_folder
    damaged = tmp_path / "damaged.png"
    damaged.write_bytes(b"\x89PNG\r\n\x1a\n not a png")

    class TwoBad(ClipItems):
        def __getitem__(self, i):
            paths, target = super().__getitem__(i)
            if i in (1, 3):  # every frame, so that the one stoker reads first is the bad one
                paths = [str(tmp_path / "gone.png") if i == 1 else str(damaged)] * len(paths)
            return paths, target

    loader = stoker.DataLoader(TwoBad(clips, "paths"), batch_size=6, frames_per_clip=2, frame_step=1,
                               transforms="Resize((8, 8))", max_bad=1)
    next(iter(loader))
    reasons = {bad["index"]: bad["reason"] for bad in loader.stats()["bad_samples"]}
    assert re.match(rf"frame \d+ of TwoBad\[1\] \({re.escape(str(tmp_path / 'gone.png'))}\): ", reasons[1]), reasons[1]
    assert re.match(r"frame \d+ of TwoBad\[3\]: ", reasons[3]), reasons[3]


def test_a_dataset0_that_raises_is_a_bad_clip_as_any_other(clip_folder):
    _, clips = clip_folder

    class FirstGone(ClipItems):
        def __getitem__(self, i):
            if i == 0:
                raise FileNotFoundError("clip0/frame_0.png")
            return super().__getitem__(i)

    loader = stoker.DataLoader(FirstGone(clips, "paths"), batch_size=6, frames_per_clip=2,
                               transforms="Resize((8, 8))", max_bad=1)
    x, _ = next(iter(loader))
    assert x.shape == (6, 2, 3, 8, 8)
    (bad,) = loader.stats()["bad_samples"]
    assert (bad["index"], bad["path"]) == (0, "FirstGone[0]")
    assert bad["reason"].startswith("raised FileNotFoundError: clip0/frame_0.png (at ")


def test_a_grayscale_video_without_a_channel_axis_is_told_to_add_one():
    class Lips(torch.utils.data.Dataset):  # LRW's mouth crops: (T, 88, 88) uint8
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return np.zeros((29, 88, 88), np.uint8), i

    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(Lips(), frames_per_clip=8, transforms="Resize((16, 16))")
    assert str(raised.value).endswith("; a grayscale video's frames (T, H, W) take a channel axis: frames[..., None], "
                                      "(T, H, W, 1)")
    assert "\n" not in str(raised.value)

    class WithAxis(Lips):
        def __getitem__(self, i):
            return super().__getitem__(i)[0][..., None], i

    x, y = next(iter(stoker.DataLoader(WithAxis(), batch_size=2, frames_per_clip=8, transforms="Resize((16, 16))")))
    assert x.shape == (2, 8, 1, 16, 16) and y.tolist() == [0, 1]  # one channel, as ToTensor gives (H, W, 1)


@pytest.mark.parametrize("kind", ["pil", "video"])
def test_gray_frames_keep_their_one_channel_as_torchvisions_to_tensor_gives_it(clip_folder, kind):
    # Lip reading's grey mouth crops: torchvision's ToTensor gives each L frame (1, H, W), as for a single image.
    _, clips = clip_folder

    class Gray(ClipItems):
        def __getitem__(self, i):
            frames = [Image.open(p).convert("L") for p in self.clips[i][0]]
            if self.kind == "pil":
                return frames, self.clips[i][1]
            return np.stack([np.asarray(f) for f in frames])[..., None], self.clips[i][1]  # (T, H, W, 1)

    chain = T.Compose([T.Resize((20, 24)), T.ToTensor(), T.Normalize((0.5,), (0.25,))])
    loader = stoker.DataLoader(Gray(clips, kind), batch_size=6, frames_per_clip=3, frame_step=1, transforms=chain,
                               return_params=True)
    x, y, params = next(iter(loader))
    assert x.shape == (6, 3, 1, 20, 24)
    for s in range(6):
        for k, frame in enumerate(params["frames"][s].tolist()):
            expected = chain(Image.open(clips[s][0][frame]).convert("L"))
            assert (x[s, k] - expected).abs().max() <= 1.01 / 255 / 0.25, (s, k)
