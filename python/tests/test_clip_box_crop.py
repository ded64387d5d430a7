"""BoxCrop on clips: a face video's Dataset gives its frames with a box (T, 4) and landmarks
(T, P, 2) per frame; stoker picks the K frames and crops each around its own box (a frame
without one takes the nearest chosen frame's), with one margin and one set of draws per clip.
The pixels are PIL's crop and resize of each frame within one uint8 level, the landmarks land
where each frame's box maps them, and params["box"] is each frame's crop, (N, K, 4)."""
import numpy as np
import pytest
import torch
from PIL import Image

import stoker
from conftest import smooth_frame

SIZE = 32
POINTS = 5


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    """Six videos as folders of PNG frames (8 to 11 of 80 x 64), a face box per frame moving
    across them (some rows NaN: no face found), landmarks inside it; a list of dicts."""
    root = tmp_path_factory.mktemp("videos")
    rng = np.random.default_rng(5)
    out = []
    for v in range(6):
        count = 8 + v % 4
        folder = root / f"video{v}"
        folder.mkdir()
        paths, boxes, points = [], [], []
        for t in range(count):
            path = folder / f"{t:03d}.png"
            Image.fromarray(smooth_frame(64, 80, 100 * v + t)).save(path)
            paths.append(str(path))
            x, y = 4 + 4.3 * t + v, 6 + 2.1 * t  # the face moves; the last ones reach past the right edge
            box = np.array([x, y, x + 20 + v, y + 24], np.float32)
            boxes.append(box)
            points.append(box[:2] + rng.uniform(0, 1, (POINTS, 2)) * (box[2:] - box[:2]))
        boxes, points = np.stack(boxes), np.stack(points).astype(np.float32)
        if v % 2:
            boxes[1::3] = np.nan  # the detector found no face there
        out.append({"paths": paths, "boxes": boxes, "points": points, "label": v % 3})
    return out


class FaceVideos(torch.utils.data.Dataset):
    """The persona's Dataset: (frames, {label, box (T, 4), landmarks (T, P, 2)})."""

    def __init__(self, videos):
        self.videos = videos

    def __len__(self):
        return len(self.videos)

    def __getitem__(self, i):
        v = self.videos[i]
        return v["paths"], {"label": v["label"], "box": stoker.Boxes(v["boxes"]),
                            "landmarks": stoker.Keypoints(v["points"])}


def centre_frames(count, k, step):
    """The centre clip's frame numbers, as stoker picks them without a random start."""
    start = max(0, count - ((k - 1) * step + 1)) // 2
    return [min(start + j * step, count - 1) for j in range(k)]


def crop_boxes(boxes, chosen, margin):
    """Each chosen frame's crop (left, top, right, bottom): its own box widened by the margin,
    truncated as int() does; a frame without a box takes the nearest chosen frame's."""
    usable = [t for t in chosen if np.isfinite(boxes[t]).all()]
    out = []
    for t in chosen:
        source = t if t in usable else min(usable, key=lambda u: (abs(u - t), u))
        x0, y0, x1, y1 = boxes[source].astype(np.float64)
        w, h = x1 - x0, y1 - y0
        out.append((int(x0 - margin * w), int(y0 - margin * h), int(x1 + margin * w), int(y1 + margin * h)))
    return out


def pil_face(path, box):
    """PIL's crop (black past the image) and bilinear resize, (H, W, 3) int16."""
    face = Image.open(path).convert("RGB").crop(box).resize((SIZE, SIZE), Image.BILINEAR)
    return np.asarray(face).astype(np.int16)


def mapped(points, box):
    left, top, right, bottom = box
    return (points.astype(np.float64) - (left, top)) * (SIZE / (right - left), SIZE / (bottom - top))


class PilFaceClips(torch.utils.data.Dataset):
    """The same crops made with PIL under the GIL, as a script does for torch's DataLoader."""

    def __init__(self, videos, k, step, margin):
        self.videos, self.k, self.step, self.margin = videos, k, step, margin

    def __len__(self):
        return len(self.videos)

    def __getitem__(self, i):
        v = self.videos[i]
        chosen = centre_frames(len(v["paths"]), self.k, self.step)
        faces = [pil_face(v["paths"][t], box) for t, box in zip(chosen, crop_boxes(v["boxes"], chosen, self.margin))]
        return torch.from_numpy(np.stack(faces)).permute(0, 3, 1, 2), v["label"]


def test_each_frame_is_cropped_around_its_own_box(videos):
    loader = stoker.DataLoader(FaceVideos(videos), batch_size=3, frames_per_clip=4, frame_step=2, return_params=True,
                               transforms=f"BoxCrop(margin=0.25), Resize(({SIZE}, {SIZE})), PILToTensor")
    seen = 0
    for x, target, params in loader:
        n = x.shape[0]
        assert x.shape == (n, 4, 3, SIZE, SIZE) and x.dtype == torch.uint8
        assert target["box"].shape == (n, 4, 5) and target["landmarks"].shape == (n, 4, POINTS, 3)
        assert params["box"].shape == (n, 4, 4)
        for s in range(n):
            v = videos[int(params["index"][s])]
            chosen = params["frames"][s].tolist()
            assert chosen == centre_frames(len(v["paths"]), 4, 2)
            assert target["label"][s] == v["label"]
            for k, (t, box) in enumerate(zip(chosen, crop_boxes(v["boxes"], chosen, 0.25))):
                left, top, right, bottom = box
                assert params["box"][s, k].tolist() == [left, top, right - left, bottom - top]
                got = x[s, k].permute(1, 2, 0).numpy().astype(np.int16)
                assert np.abs(got - pil_face(v["paths"][t], box)).max() <= 1, (v["paths"][t], box)
                points = target["landmarks"][s, k].numpy()
                assert np.abs(points[:, :2] - mapped(v["points"][t], box)).max() < 1e-3
                seen += 1
    assert seen == 6 * 4


def test_a_frame_without_a_box_takes_the_nearest_chosen_frames(videos):
    # Video 1's frames 1, 4 and 7 have no box: frame 4 takes 3's (as near as 5's: the earlier),
    # frame 7 takes 6's, frame 1 takes 0's.
    v = videos[1]
    loader = stoker.DataLoader(FaceVideos(videos), batch_size=6, frames_per_clip=8, return_params=True,
                               transforms=f"BoxCrop(margin=0), Resize(({SIZE}, {SIZE})), PILToTensor")
    x, target, params = next(iter(loader))
    assert params["frames"][1].tolist() == list(range(8))
    b = v["boxes"]
    for k, lender in [(1, 0), (4, 3), (7, 6), (5, 5)]:
        x0, y0, x1, y1 = (int(c) for c in b[lender])
        assert params["box"][1, k].tolist() == [x0, y0, x1 - x0, y1 - y0], k
        assert np.abs(x[1, k].permute(1, 2, 0).numpy() - pil_face(v["paths"][k], (x0, y0, x1, y1))).max() <= 1
    # The frame's own NaN box comes back not valid, the others valid.
    assert target["box"][1, :, 4].tolist() == [1, 0, 1, 1, 0, 1, 1, 0]


def test_one_margin_and_one_set_of_draws_per_clip(tmp_path):
    # A clip of identical frames with identical boxes: every frame's crop is the same, whatever
    # the margin, flip and jitter drawn for the clip; the margin differs between clips.
    path = tmp_path / "f.png"
    Image.fromarray(smooth_frame(64, 80, 1)).save(path)

    class Still(torch.utils.data.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return [str(path)] * 6, {"box": stoker.Boxes(np.tile([[20, 10, 44, 40]], (6, 1)))}

    chain = (f"BoxCrop(margin=(0.1, 0.5)), Resize(({SIZE + 4}, {SIZE + 4})), RandomCrop({SIZE}), "
             "RandomHorizontalFlip(), ColorJitter(0.4, 0.4, 0.4), ToUint8")
    loader = stoker.DataLoader(Still(), batch_size=8, frames_per_clip=3, shuffle=True, seed=2, transforms=chain,
                               return_params=True)
    x, _, params = next(iter(loader))
    for k in (1, 2):
        assert torch.equal(x[:, k], x[:, 0])
        assert torch.equal(params["box"][:, k], params["box"][:, 0])
    assert len(set(params["box"][:, 0, 2].tolist())) > 1, "the margin is drawn per clip"


@pytest.mark.parametrize("rank", [0, 1])
def test_batches_under_a_distributed_sampler_equal_a_pil_dataset(videos, rank):
    margin, k, step = 0.2, 3, 2
    chain = f"BoxCrop(margin={margin}), Resize(({SIZE}, {SIZE})), PILToTensor"

    def sampler(dataset):
        s = torch.utils.data.DistributedSampler(dataset, num_replicas=2, rank=rank, shuffle=True, seed=4)
        s.set_epoch(1)
        return s

    ours = FaceVideos(videos)
    loader = stoker.DataLoader(ours, batch_size=2, sampler=sampler(ours), frames_per_clip=k, frame_step=step,
                               clip_start="center", transforms=chain, num_workers=2)
    theirs = PilFaceClips(videos, k, step, margin)
    reference = torch.utils.data.DataLoader(theirs, batch_size=2, sampler=sampler(theirs))
    count = 0
    for (x, target), (y, labels) in zip(loader, reference, strict=True):
        assert target["label"].tolist() == labels.tolist()
        assert (x.short() - y.short()).abs().max() <= 1
        count += len(labels)
    assert count == 3


def test_union_crops_every_frame_around_one_box(videos):
    # BoxCrop(union=True): every chosen frame cropped around one box, the union of their boxes
    # (frames without one left out) widened by the margin.
    loader = stoker.DataLoader(FaceVideos(videos), batch_size=6, frames_per_clip=3, frame_step=2, return_params=True,
                               transforms=f"BoxCrop(margin=0.1, union=True), Resize(({SIZE}, {SIZE})), PILToTensor")
    x, _, params = next(iter(loader))
    for s in range(6):
        v = videos[int(params["index"][s])]
        chosen = params["frames"][s].tolist()
        boxes = v["boxes"][chosen].astype(np.float64)
        boxes = boxes[np.isfinite(boxes).all(1)]
        x0, y0 = boxes[:, :2].min(0)
        x1, y1 = boxes[:, 2:].max(0)
        w, h = x1 - x0, y1 - y0
        box = (int(x0 - 0.1 * w), int(y0 - 0.1 * h), int(x1 + 0.1 * w), int(y1 + 0.1 * h))
        for k, t in enumerate(chosen):
            assert params["box"][s, k].tolist() == [box[0], box[1], box[2] - box[0], box[3] - box[1]]
            assert np.abs(x[s, k].permute(1, 2, 0).numpy() - pil_face(v["paths"][t], box)).max() <= 1


def test_jpeg_frames_decode_their_crop_regions_as_single_images_do(tmp_path):
    # Large JPEG frames and small faces: each frame's crop region is decoded (at a reduced scale)
    # as a single image's is: the clip's frames equal the frames loaded alone with their own box.
    paths, boxes = [], []
    for t in range(4):
        path = tmp_path / f"{t}.jpg"
        Image.fromarray(smooth_frame(400, 480, t)).save(path, quality=90)
        paths.append(str(path))
        boxes.append([300 - 40 * t, 120 + 10 * t, 400 - 40 * t, 240 + 10 * t])
    boxes = np.array(boxes, np.float32)
    chain = f"BoxCrop(margin=0.2), Resize(({SIZE}, {SIZE})), PILToTensor"

    class Clip(torch.utils.data.Dataset):
        def __len__(self):
            return 1

        def __getitem__(self, i):
            return paths, stoker.Boxes(boxes)

    class Frames(torch.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, t):
            return paths[t], stoker.Boxes(boxes[t:t + 1])

    clip, _ = next(iter(stoker.DataLoader(Clip(), frames_per_clip=4, transforms=chain)))
    frames, _ = next(iter(stoker.DataLoader(Frames(), batch_size=4, transforms=chain)))
    assert torch.equal(clip[0], frames)


def test_a_clip_without_any_box_is_a_bad_sample(videos):
    class NoFace(FaceVideos):
        def __getitem__(self, i):
            paths, target = super().__getitem__(i)
            if i == 2:
                target["box"] = stoker.Boxes(np.full((len(paths), 4), np.nan, np.float32))
            return paths, target

    loader = stoker.DataLoader(NoFace(videos), batch_size=6, frames_per_clip=2, max_bad=1,
                               transforms=f"BoxCrop(margin=0.2), Resize(({SIZE}, {SIZE}))")
    x, _ = next(iter(loader))
    assert x.shape == (6, 2, 3, SIZE, SIZE)
    (bad,) = loader.stats()["bad_samples"]
    assert bad["index"] == 2
    assert bad["reason"] == ("BoxCrop has no box to crop the clip around: none of its 2 chosen frames has a usable one "
                             "(frame 4 of NoFace[2]: BoxCrop's box (nan, nan, nan, nan) is not finite; give the "
                             "sample a box of numbers, or leave it out)")


def _refused(dataset, **options):
    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(dataset, frames_per_clip=2, **options)
    return str(raised.value)


def test_what_clips_cannot_take_is_refused_in_one_line(videos):
    paths = videos[0]["paths"]

    class One(torch.utils.data.Dataset):
        def __init__(self, target):
            self.target = target

        def __len__(self):
            return 1

        def __getitem__(self, i):
            return paths, self.target

    chain = f"BoxCrop(margin=0.2), Resize(({SIZE}, {SIZE}))"
    assert _refused(One({"mask": stoker.Mask(np.zeros((64, 80), np.uint8))}), transforms=chain) == (
        "dataset: One[0] holds a stoker.Mask beside its clip, and masks follow single images only; read the frames "
        "as single images with their masks (no frames_per_clip), give the clip stoker.Boxes (T, 4) or "
        "stoker.Keypoints (T, P, 2), or leave the mask out")
    assert _refused(One(stoker.Boxes(np.zeros((3, 4)))), transforms=chain) == (
        "dataset: One[0] holds stoker.Boxes of 3 rows beside its clip of 8 frames; give one row per frame, (T, 4) "
        "with T = 8")
    assert _refused(One(stoker.Keypoints(np.zeros((68, 2)))), transforms=chain) == (
        "dataset: One[0] holds stoker.Keypoints of 68 points beside its clip of 8 frames; give each frame's points, "
        "(T, P, 2) or (T, P, 3) with T = 8")
    boxed = One(stoker.Boxes(videos[0]["boxes"]))
    assert _refused(boxed, transforms=chain, keypoints=np.zeros((1, 8, 5, 2))) == (  # arrays aligned with samples
        "keypoints='<array>': arrays aligned with a path's or an ImageFolder's samples; a Dataset object puts "
        "stoker.Keypoints / stoker.Boxes in its items instead, (T, P, 2) and (T, 4) beside a clip")
    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(One(stoker.Keypoints(np.zeros((8, 68, 2)))), transforms=chain)
    assert str(raised.value) == ("dataset: One[0] holds stoker.Keypoints of 8 frames of 68 points beside a single "
                                 "image; give one image's points, (P, 2) or (P, 3), or read clips with "
                                 "frames_per_clip=K")
    with pytest.raises(ValueError) as raised:  # a detector's (T, 1, 4): one box per frame, one axis too many
        stoker.Boxes(np.zeros((8, 1, 4)))
    assert str(raised.value) == ("Boxes: an array of shape (B, 4), or (T, 4) beside a clip (a box per frame); this "
                                 "one is (8, 1, 4)")
    assert _refused(One(0), transforms=chain).endswith(
        "has neither; give them (boxes= or keypoints= with a row per frame, or stoker.Boxes (T, 4) or "
        "stoker.Keypoints (T, P, 2) beside a Dataset's clips), or leave BoxCrop out")
