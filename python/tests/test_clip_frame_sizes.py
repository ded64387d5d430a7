"""Clips whose frames differ in size and aspect: face crops saved one JPEG per frame, straight
from a detector (143x171, then 150x168, ...). The script's chain runs per frame as torchvision
runs it per frame under one seed per clip: each frame resized by its own shorter side, the crop
at the clip's one draw placed in that frame's own size, every other draw the clip's."""
import numpy as np
import pytest
import torch
import torchvision.transforms as T
import torchvision.transforms.functional as F
from PIL import Image

import stoker
from conftest import smooth_frame

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
SIZE = 28


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    """Five clips of 6 to 9 JPEG frames, each frame its own size and aspect (portrait and
    landscape), with a face box per frame in its own pixels: [(paths, boxes, label)]."""
    root = tmp_path_factory.mktemp("faces")
    rng = np.random.default_rng(11)
    out = []
    for c in range(5):
        paths, boxes = [], []
        for t in range(6 + c % 4):
            h, w = int(rng.integers(34, 50)), int(rng.integers(30, 52))
            path = root / f"clip{c}_{t:02d}.jpg"
            Image.fromarray(smooth_frame(h, w, 10 * c + t)).save(path, quality=95)
            paths.append(str(path))
            x0, y0 = rng.uniform(0, w / 4), rng.uniform(0, h / 4)
            boxes.append([x0, y0, x0 + w / 2 + rng.uniform(0, w / 4), y0 + h / 2 + rng.uniform(0, h / 4)])
        out.append((paths, np.array(boxes, np.float32), c % 2))
    return out


class FaceClips(torch.utils.data.Dataset):
    """The script's Dataset: (frames as PIL images, label), or with the face boxes."""

    def __init__(self, clips, boxes=False):
        self.clips, self.boxes = clips, boxes

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, i):
        paths, boxes, label = self.clips[i]
        frames = [Image.open(p).convert("RGB") for p in paths]
        return (frames, {"label": label, "face": stoker.Boxes(boxes)}) if self.boxes else (frames, label)


def levels(got, expected):
    """The difference in uint8 levels of two normalized frames."""
    return (got - expected).abs() * torch.tensor(STD).view(3, 1, 1) * 255


def test_the_eval_chain_resizes_each_frame_by_its_own_shorter_side(clips):
    chain = T.Compose([T.Resize(SIZE), T.CenterCrop(SIZE), T.ToTensor(), T.Normalize(MEAN, STD)])
    loader = stoker.DataLoader(FaceClips(clips), batch_size=5, frames_per_clip=4, frame_step=1, transforms=chain,
                               return_params=True, max_bad=0)
    x, y, params = next(iter(loader))
    assert x.shape == (5, 4, 3, SIZE, SIZE) and loader.stats()["bad_samples"] == []
    assert params["source_size"].shape == (5, 4, 2) and params["box"].shape == (5, 4, 4)
    for s in range(5):
        paths = clips[s][0]
        for k, t in enumerate(params["frames"][s].tolist()):
            image = Image.open(paths[t]).convert("RGB")
            assert params["source_size"][s, k].tolist() == list(image.size)
            diff = levels(x[s, k], chain(image))
            assert diff.mean() < 1 and diff.max() <= 3, (s, k, diff.mean(), diff.max())


def redone(image, resize, params, s, k):
    """Frame k of sample s made again with torchvision's functional: resized by its shorter side
    (resize None: not), cropped at its own box (params["box"][s, k], in source pixels), then the
    clip's flip and colour; also the crop's (top, left) and the resized (height, width)."""
    resized = F.resize(image, resize) if resize else image
    scale_x, scale_y = resized.width / image.width, resized.height / image.height
    left, top, width, height = params["box"][s, k].tolist()
    left, top = round(left * scale_x), round(top * scale_y)
    assert (round(width * scale_x), round(height * scale_y)) == (SIZE, SIZE)
    pixels = F.crop(resized, top, left, SIZE, SIZE)
    pixels = F.to_tensor(F.hflip(pixels) if params["hflip"][s] else pixels)
    adjust = [F.adjust_brightness, F.adjust_contrast, F.adjust_saturation]
    for step in params["color_order"][s].tolist():
        if step < 3:
            pixels = adjust[step](pixels, params["color"][s][step].item())
    return F.normalize(pixels, MEAN, STD), (top, left), (resized.height, resized.width)


def train_chain(resize):
    return T.Compose(([T.Resize(resize)] if resize else []) + [
        T.RandomCrop(SIZE), T.RandomHorizontalFlip(), T.ColorJitter(0.3, 0.3, 0.3), T.ToTensor(),
        T.Normalize(MEAN, STD)])


def test_the_train_chain_takes_the_clips_one_draw_in_each_frames_own_size(clips):
    # The draws as a script's per-clip seed makes them: one crop position, flip and colour per clip.
    resize = SIZE + 6
    loader = stoker.DataLoader(FaceClips(clips), batch_size=5, shuffle=True, seed=7, frames_per_clip=4, frame_step=1,
                               transforms=train_chain(resize), return_params=True, max_bad=0)
    flips = set()
    for epoch in range(3):
        for x, _, params in loader:
            assert loader.stats()["bad_samples"] == []
            for s in range(len(x)):
                paths = clips[int(params["index"][s])][0]
                flips.add(bool(params["hflip"][s]))
                fractions = []  # each frame's offsets as a fraction of its room: one draw for the clip
                for k, t in enumerate(params["frames"][s].tolist()):
                    expected, offsets, resized = redone(Image.open(paths[t]).convert("RGB"), resize, params, s, k)
                    fractions.append([(o / (r - SIZE + 1), (o + 1) / (r - SIZE + 1)) for o, r in zip(offsets, resized)])
                    diff = levels(x[s, k], expected)
                    assert diff.mean() < 1 and diff.max() <= 3, (s, k, diff.mean(), diff.max())
                for axis in range(2):  # one fraction u with floor(u * (room + 1)) == offset in every frame
                    assert max(f[axis][0] for f in fractions) < min(f[axis][1] for f in fractions), fractions
    assert flips == {False, True}


def test_a_frame_of_the_crops_size_takes_the_clips_flip_and_colour(tmp_path):
    # A first frame of exactly the crop's size draws no offsets, the others do: every frame still
    # takes the clip's one flip and colour.
    sizes = [(SIZE, SIZE), (SIZE + 9, SIZE + 4), (SIZE + 3, SIZE + 12), (SIZE, SIZE + 20)]
    clips = []
    for c in range(6):
        paths = []
        for t, (h, w) in enumerate(sizes):
            path = tmp_path / f"clip{c}_{t}.png"
            Image.fromarray(smooth_frame(h, w, 10 * c + t)).save(path)
            paths.append(str(path))
        clips.append((paths, None, 0))
    loader = stoker.DataLoader(FaceClips(clips), batch_size=6, shuffle=True, seed=3, frames_per_clip=4, frame_step=1,
                               transforms=train_chain(None), return_params=True, max_bad=0)
    flips = set()
    for epoch in range(2):
        for x, _, params in loader:
            for s in range(len(x)):
                paths = clips[int(params["index"][s])][0]
                flips.add(bool(params["hflip"][s]))
                for k, t in enumerate(params["frames"][s].tolist()):
                    expected, _, _ = redone(Image.open(paths[t]).convert("RGB"), None, params, s, k)
                    diff = levels(x[s, k], expected)
                    assert diff.mean() < 1 and diff.max() <= 3, (s, k, diff.mean(), diff.max())
    assert flips == {False, True}


@pytest.mark.parametrize("after", [f"Resize(({SIZE}, {SIZE}))", f"Resize({SIZE}), CenterCrop({SIZE})"])
def test_box_crop_crops_frames_of_each_their_size_around_their_own_boxes(clips, after):
    loader = stoker.DataLoader(FaceClips(clips, boxes=True), batch_size=5, frames_per_clip=4, frame_step=1,
                               transforms=f"BoxCrop(margin=0.2), {after}, PILToTensor", return_params=True,
                               max_bad=0)
    x, target, params = next(iter(loader))
    assert x.shape == (5, 4, 3, SIZE, SIZE) and loader.stats()["bad_samples"] == []
    for s in range(5):
        paths, boxes, _ = clips[s]
        for k, t in enumerate(params["frames"][s].tolist()):
            x0, y0, x1, y1 = boxes[t].astype(np.float64)
            crop = (int(x0 - 0.2 * (x1 - x0)), int(y0 - 0.2 * (y1 - y0)), int(x1 + 0.2 * (x1 - x0)),
                    int(y1 + 0.2 * (y1 - y0)))
            image = Image.open(paths[t]).convert("RGB").crop(crop)
            made = image.resize((SIZE, SIZE), Image.BILINEAR) if "((" in after else \
                F.center_crop(F.resize(image, SIZE), SIZE)
            expected = torch.from_numpy(np.array(made)).permute(2, 0, 1).int()
            assert (x[s, k].int() - expected).abs().max() <= 1, (s, k)
            if "((" in after:
                assert params["box"][s, k].tolist() == [crop[0], crop[1], crop[2] - crop[0], crop[3] - crop[1]]


def test_box_crop_union_crops_frames_of_each_their_size_at_one_box(clips):
    # union=True: one box for the clip, the union of its frames' boxes, cut from each frame in its
    # own pixels (past a smaller frame's edge, BoxCrop's black fill).
    loader = stoker.DataLoader(FaceClips(clips, boxes=True), batch_size=5, frames_per_clip=4, frame_step=1,
                               transforms=f"BoxCrop(margin=0.1, union=True), Resize(({SIZE}, {SIZE})), PILToTensor",
                               return_params=True, max_bad=0)
    x, _, params = next(iter(loader))
    for s in range(5):
        paths, boxes, _ = clips[s]
        chosen = params["frames"][s].tolist()
        x0, y0 = boxes[chosen, :2].astype(np.float64).min(0)
        x1, y1 = boxes[chosen, 2:].astype(np.float64).max(0)
        w, h = x1 - x0, y1 - y0
        crop = (int(x0 - 0.1 * w), int(y0 - 0.1 * h), int(x1 + 0.1 * w), int(y1 + 0.1 * h))
        for k, t in enumerate(chosen):
            assert params["box"][s, k].tolist() == [crop[0], crop[1], crop[2] - crop[0], crop[3] - crop[1]]
            made = Image.open(paths[t]).convert("RGB").crop(crop).resize((SIZE, SIZE), Image.BILINEAR)
            expected = torch.from_numpy(np.array(made)).permute(2, 0, 1).int()
            assert (x[s, k].int() - expected).abs().max() <= 1, (s, k)
