"""Per-frame boxes and landmarks for clips given by path (a folder of clip folders, a CSV list
of clips) with keypoints= and boxes=: every form (arrays of all frames' rows, a list per clip,
a file per clip in its folder, the file beside each frame, a CSV column) gives the batches the
Dataset route (stoker.Boxes (T, 4), stoker.Keypoints (T, P, 2) in its items) gives for the same
frames: the same pixels, crops and boxes, landmarks within 1e-3 px. Row counts that differ from
the frames, per clip or in all, are one line."""
import json

import numpy as np
import pytest
import torch
from PIL import Image

import stoker

SIZE = 24
POINTS = 4
CHAIN = f"BoxCrop(margin=(0.1, 0.4)), Resize(({SIZE}, {SIZE})), RandomHorizontalFlip(), ColorJitter(0.3, 0.3), ToUint8"


def _frame(h, w, seed):
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    c = np.random.default_rng(seed).uniform(0, 1, (3, 2))
    image = np.stack([120 + 60 * np.sin(xx / (4 + 9 * c[k, 0])) + 50 * np.cos(yy / (3 + 8 * c[k, 1]))
                      for k in range(3)], -1)
    return np.clip(image, 0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    """Five videos of 5 to 7 PNG frames (48 x 40) in clips/<class>/<video>/, listed in the clip
    folder's order; a face box per frame (some NaN: none found) and landmarks inside it, kept
    as a boxes.npy and a landmarks.npy per folder and a .pts beside each frame; a CSV list of
    the same clips naming each one's boxes file."""
    root = tmp_path_factory.mktemp("faces")
    rng = np.random.default_rng(3)
    videos = []
    for v in range(5):
        folder = root / "clips" / f"c{v % 2}" / f"video{v}"
        folder.mkdir(parents=True)
        count = 5 + v % 3
        paths, boxes, points = [], [], []
        for t in range(count):
            path = folder / f"{t:02d}.png"
            Image.fromarray(_frame(40, 48, 10 * v + t)).save(path)
            paths.append(str(path))
            x, y = 2 + 3.1 * t + v, 3 + 1.7 * t
            box = np.array([x, y, x + 16 + v, y + 18], np.float32)
            boxes.append(box)
            points.append(box[:2] + rng.uniform(0, 1, (POINTS, 2)) * (box[2:] - box[:2]))
        boxes, points = np.stack(boxes), np.stack(points).astype(np.float32)
        if v % 2:
            boxes[1::3] = np.nan
            points[2] = np.nan
        np.save(folder / "boxes.npy", boxes)
        np.save(folder / "landmarks.npy", points)
        for path, p in zip(paths, points):
            with open(path[:-4] + ".pts", "w") as f:
                f.write(f"version: 1\nn_points: {POINTS}\n{{\n" + "".join(f"{a} {b}\n" for a, b in p) + "}\n")
        videos.append({"paths": paths, "boxes": boxes, "points": points, "folder": folder})
    videos.sort(key=lambda v: (v["folder"].parent.name, v["folder"].name))  # the clip folder's order
    rows = ["frames,label,face"] + [f"{'|'.join(v['paths'])},{i % 2},{v['folder'] / 'boxes.npy'}"
                                    for i, v in enumerate(videos)]
    (root / "clips.csv").write_text("\n".join(rows) + "\n")
    return root, videos


class FaceVideos(torch.utils.data.Dataset):
    def __init__(self, videos):
        self.videos = videos

    def __len__(self):
        return len(self.videos)

    def __getitem__(self, i):
        v = self.videos[i]
        return v["paths"], {"box": stoker.Boxes(v["boxes"]), "landmarks": stoker.Keypoints(v["points"])}


def _options(**more):
    return dict(batch_size=5, frames_per_clip=3, frame_step=2, clip_start="random", seed=7, return_params=True,
                transforms=CHAIN, **more)


def _equal_to_the_dataset_route(videos, data, **given):
    (x, target, params), = list(stoker.DataLoader(FaceVideos(videos), **_options()))
    (y, _, landmarks, boxes, their), = list(stoker.DataLoader(data, **_options(**given)))
    assert torch.equal(params["frames"], their["frames"])
    assert torch.equal(x, y)
    assert torch.equal(params["box"], their["box"])
    assert boxes.shape == (5, 3, 5) and landmarks.shape == (5, 3, POINTS, 3)
    assert torch.allclose(target["box"], boxes, atol=1e-3, equal_nan=True)
    assert torch.equal(target["box"][..., 4], boxes[..., 4])
    assert torch.allclose(target["landmarks"], landmarks, atol=1e-3, equal_nan=True)
    assert (boxes[..., 4] == 0).any(), "a frame without a face (a NaN row) comes back not valid"


def test_arrays_of_every_frame_or_one_per_clip_equal_the_dataset_route(clips):
    root, videos = clips
    _equal_to_the_dataset_route(videos, str(root / "clips"), boxes=[v["boxes"] for v in videos],
                                keypoints=np.concatenate([v["points"] for v in videos]))


def test_files_in_each_clip_folder_and_beside_each_frame_equal_the_dataset_route(clips):
    root, videos = clips
    _equal_to_the_dataset_route(videos, str(root / "clips"), boxes="boxes.npy", keypoints=".pts")


def test_a_csv_lists_column_of_files_and_a_file_per_clip_equal_the_dataset_route(clips):
    root, videos = clips
    _equal_to_the_dataset_route(videos, str(root / "clips.csv"), boxes="face", keypoints="landmarks.npy")


def test_a_json_file_per_clip_takes_an_empty_row_or_null_for_a_frame_without_a_face(clips):
    # As face detectors write them: [] (or null) where a frame has no face, not [NaN, NaN, NaN, NaN].
    root, videos = clips
    for v in videos:
        rows = [None if t == 4 else [] if np.isnan(box).any() else box.tolist() for t, box in enumerate(v["boxes"])]
        (v["folder"] / "faces.json").write_text(json.dumps(rows))
    saved = [v["boxes"] for v in videos]
    try:
        for v in videos:
            v["boxes"] = v["boxes"].copy()
            v["boxes"][4] = np.nan
        _equal_to_the_dataset_route(videos, str(root / "clips"), boxes="faces.json", keypoints=".pts")
    finally:
        for v, boxes in zip(videos, saved):
            v["boxes"] = boxes


def test_a_csv_column_of_json_arrays_is_each_clips_rows(clips, tmp_path):
    root, videos = clips
    rows = ["frames,label,face"] + [f"{'|'.join(v['paths'])},0,\"{json.dumps(v['boxes'].tolist())}\"" for v in videos]
    (tmp_path / "clips.csv").write_text("\n".join(rows) + "\n")
    loader = stoker.DataLoader(str(tmp_path / "clips.csv"), **_options(boxes="face"))
    (y, labels, boxes, params), = list(loader)
    assert boxes.shape == (5, 3, 5) and labels.tolist() == [0] * 5  # the column is not passed through


def _refused(data, **given):
    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(data, frames_per_clip=2, transforms=CHAIN, **given)
    return str(raised.value)


def test_rows_that_differ_from_the_frames_are_one_line(clips, tmp_path):
    root, videos = clips
    folder = str(root / "clips")
    short = [v["boxes"] for v in videos]
    short[2] = short[2][:-1]
    assert _refused(folder, boxes=short) == (
        f"boxes='<list of 5 arrays>': clip 2 ({videos[2]['folder']}) holds boxes of {len(short[2])} rows beside its "
        f"clip of {len(short[2]) + 1} frames; give one row per frame, (T, 4) with T = {len(short[2]) + 1}")
    total = sum(len(v["paths"]) for v in videos)
    assert _refused(folder, keypoints=np.zeros((total - 1, POINTS, 2))) == (
        f"keypoints='<array of shape ({total - 1}, {POINTS}, 2)>': a row per frame of the 5 clips, {total} in all, in "
        "the listing's order (clip after clip); or give a list of one array per clip")
    assert _refused(folder, boxes=np.zeros((total, 2, 4))) == (
        f"boxes='<array of shape ({total}, 2, 4)>': a row per frame, (T, 4): an array (F, ...) of every frame's rows or "
        "one per clip")
    for v in videos:  # a frame number before each box, as detectors write them
        np.savetxt(v["folder"] / "numbered.csv", np.c_[np.arange(len(v["boxes"])), v["boxes"]], delimiter=",")
    assert _refused(folder, boxes="numbered.csv") == (
        "boxes='numbered.csv': a row per frame, (T, 4): an array (F, ...) of every frame's rows or one per clip; "
        "got rows of shape (5,)")
    assert _refused(folder, boxes="faces.npy").startswith(
        f"boxes='faces.npy': {videos[0]['folder'] / 'faces.npy'} does not exist; every clip needs its file")
    assert _refused(folder, keypoints=".txt").startswith(
        f"keypoints='.txt': {total} of {total} frames have no side file (first: {videos[0]['paths'][0][:-4]}.txt); "
        "every frame needs one")
    assert _refused(folder, keypoints="marks").startswith("keypoints='marks': an array or an .npy file of every "
                                                          "frame's rows")


def test_a_later_items_rows_that_differ_from_its_frames_make_a_bad_sample_naming_it(clips):
    _, videos = clips

    class OneShort(FaceVideos):
        def __getitem__(self, i):
            paths, target = super().__getitem__(i)
            if i == 3:
                target["box"] = stoker.Boxes(self.videos[i]["boxes"][:-2])
            if i == 4:
                target["mask"] = stoker.Mask(np.zeros((40, 48), np.uint8))
            if i == 2:  # one image's points
                target["landmarks"] = stoker.Keypoints(self.videos[i]["points"][0])
            return paths, target

    loader = stoker.DataLoader(OneShort(videos), batch_size=5, frames_per_clip=2, transforms=CHAIN, max_bad=1)
    next(iter(loader))
    reasons = {bad["index"]: bad["reason"] for bad in loader.stats()["bad_samples"]}
    t = len(videos[3]["paths"])
    assert reasons[3] == (f"OneShort[3] holds stoker.Boxes of {t - 2} rows beside its clip of {t} frames; give one "
                          f"row per frame, (T, 4) with T = {t}")
    t = len(videos[2]["paths"])
    assert reasons[2] == (f"OneShort[2] holds stoker.Keypoints of {POINTS} points beside its clip of {t} frames; "
                          f"give each frame's points, (T, P, 2) or (T, P, 3) with T = {t}")
    assert reasons[4] == ("OneShort[4] holds a stoker.Mask beside its clip, and masks follow single images only; read "
                          "the frames as single images with their masks (no frames_per_clip), give the clip "
                          "stoker.Boxes (T, 4) or stoker.Keypoints (T, P, 2), or leave the mask out")


def test_landmarks_in_a_text_file_per_clip_folder_are_a_line_of_x_y_pairs_per_frame(clips):
    root, videos = clips
    for v in videos:  # x1 y1 x2 y2 ... per frame; "nan" where no face was found
        np.savetxt(v["folder"] / "landmarks.txt", v["points"].reshape(len(v["points"]), -1))
        np.savetxt(v["folder"] / "landmarks.csv", v["points"].reshape(len(v["points"]), -1), delimiter=",")
    _equal_to_the_dataset_route(videos, str(root / "clips"), boxes="boxes.npy", keypoints="landmarks.txt")
    _equal_to_the_dataset_route(videos, str(root / "clips.csv"), boxes="face", keypoints="landmarks.csv")
    np.savetxt(videos[1]["folder"] / "odd.txt", np.zeros((len(videos[1]["paths"]), 2 * POINTS + 1)))
    for v in videos[:1] + videos[2:]:
        np.savetxt(v["folder"] / "odd.txt", v["points"].reshape(len(v["points"]), -1))
    assert _refused(str(root / "clips"), keypoints="odd.txt") == (
        f"keypoints='odd.txt': {videos[1]['folder'] / 'odd.txt'}: lines of {2 * POINTS + 1} numbers, not x y pairs; "
        "points with a visibility need an .npy or .json file; a clip's file is an .npy or .json array (T, P, 2) or "
        "(T, P, 3), or a line per frame (.txt, .csv: x1 y1 x2 y2 ...)")


def test_a_visibility_other_than_0_or_1_names_the_clip_and_its_frame(clips):
    root, videos = clips
    per_clip = [np.concatenate([np.nan_to_num(v["points"]), np.ones((len(v["points"]), POINTS, 1), np.float32)], 2)
                for v in videos]
    per_clip[3][2, 1, 2] = 2
    expected = (f"keypoints: the third column of (P, 3) points is their visibility, 0 or 1, and clip 3's frame 2 "
                f"({videos[3]['paths'][2]})'s point 1 has 2; for (x, y, z) points give points[..., :2], for COCO's "
                "flags v give (v > 0)")
    assert _refused(str(root / "clips"), keypoints=per_clip) == expected
    assert _refused(str(root / "clips"), keypoints=np.concatenate(per_clip)) == expected


@pytest.mark.parametrize("given", [dict(boxes="boxes.npy"), dict(keypoints=".pts"), {}])
def test_a_list_of_clips_without_frames_per_clip_is_refused_before_its_rows_are_read(clips, given):
    root, _ = clips  # not a missing boxes file, a missing .pts or BoxCrop without boxes: the frames are not chosen
    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(str(root / "clips.csv"), transforms=CHAIN, **given)
    assert str(raised.value) == (f"file list {root / 'clips.csv'}: 5 clips, 2 classes · passes through face holds "
                                 "clips (samples of several frames); choose the frames of each with frames_per_clip=K "
                                 "and frame_step (stoker bench loader: --frames-per-clip, --frame-step)")


def test_messages_show_a_listed_clip_by_its_first_and_last_frame(clips, tmp_path):
    root, videos = clips  # a video's list of thousands of paths would fill the terminal
    short = [v["boxes"] for v in videos]
    short[2] = short[2][:-1]
    paths = videos[2]["paths"]
    assert _refused(str(root / "clips.csv"), boxes=short).startswith(
        f"boxes='<list of 5 arrays>': clip 2 ({paths[0]}|...|{paths[-1]} ({len(paths)} frames)) holds boxes of "
        f"{len(paths) - 1} rows")
    missing = [str(tmp_path / f"gone{t}.png") for t in range(3)]
    (tmp_path / "clips.csv").write_text("frames,label\n" + "|".join(videos[0]["paths"]) + ",0\n"
                                        + "|".join(missing) + ",1\n")
    loader = stoker.DataLoader(str(tmp_path / "clips.csv"), frames_per_clip=2, transforms="Resize((8, 8))", max_bad=0)
    with pytest.raises(stoker.DataError, match=rf"; first: {missing[0]}\|\.\.\.\|{missing[2]} \(3 frames\): frame "
                                               rf"{missing[0]}: "):
        list(loader)
    assert loader.stats()["bad_samples"][0]["path"] == "|".join(missing)  # the whole cell, as exclude lists take it
