"""Keypoints and boxes follow the geometry: given as arrays aligned with the samples, or as
stoker.Keypoints / stoker.Boxes in a Dataset item's target; points that leave the image are
kept and marked not visible; flip_pairs swap symmetric landmarks; boxes are clamped and an
empty one is marked."""
import numpy as np
import pytest
import torch
from PIL import Image

import stoker
from conftest import visible_where_white


@pytest.fixture()
def blocks(tmp_path):
    """A folder (one class, c/) of six 40 x 30 dark images with a bright 4 x 4 block at a
    different place in each, and the blocks' centres."""
    centres = []
    (tmp_path / "c").mkdir()
    for i in range(6):
        pixels = np.zeros((30, 40, 3), np.uint8)
        x, y = 6 + 5 * i, 4 + 3 * i
        pixels[y:y + 4, x:x + 4] = 255
        Image.fromarray(pixels).save(tmp_path / "c" / f"{i}.png")
        centres.append((x + 2.0, y + 2.0))
    return tmp_path, centres


class Blocks(torch.utils.data.Dataset):
    def __init__(self, root, centres):
        self.root, self.centres = root, centres

    def __len__(self):
        return len(self.centres)

    def __getitem__(self, i):
        x, y = self.centres[i]
        return str(self.root / "c" / f"{i}.png"), {
            "id": i,
            "eyes": stoker.Keypoints([[x - 1, y], [x + 1, y]]),
            "block": stoker.Boxes([[x - 2, y - 2, 4, 4]], format="xywh"),
        }


def bright_centre(image):
    """The centre of the bright part of one CHW uint8 image, in pixels."""
    plane = image[0].float()
    weight = (plane >= plane.max() / 2).float() * plane
    ys, xs = torch.meshgrid(torch.arange(plane.shape[0]) + 0.5, torch.arange(plane.shape[1]) + 0.5, indexing="ij")
    return (weight * xs).sum() / weight.sum(), (weight * ys).sum() / weight.sum()


def test_a_resize_and_a_flip_move_aligned_keypoints_exactly(blocks):
    root, centres = blocks
    points = np.array([[[x, y], [x + 10, y]] for x, y in centres], np.float32)
    boxes = np.array([[[x - 2, y - 2, x + 2, y + 2]] for x, y in centres], np.float32)
    loader = stoker.DataLoader(root, batch_size=6,
                               transforms="Resize((15, 20)), RandomHorizontalFlip(1.0), ToUint8",
                               keypoints=points, boxes=boxes, flip_pairs=[(0, 1)])
    x, y, keypoints, moved_boxes = next(iter(loader))
    assert keypoints.shape == (6, 2, 3) and moved_boxes.shape == (6, 1, 5)
    for k, (cx, cy) in enumerate(centres):
        # halved, mirrored (x -> 20 - x), then the pair swapped; a point past the left edge is kept, not visible
        far = 20 - (cx + 10) / 2
        assert keypoints[k].tolist() == [[far, cy / 2, float(far >= 0)], [20 - cx / 2, cy / 2, 1]]
        assert moved_boxes[k, 0].tolist() == [20 - (cx + 2) / 2, (cy - 2) / 2, 20 - (cx - 2) / 2, (cy + 2) / 2, 1]


@pytest.mark.parametrize("chain", [
    "RandomResizedCrop(24, scale=(0.6, 1.0)), RandomHorizontalFlip()",
    "Resize((24, 32)), RandomRotation(40, interpolation=nearest)",
    "Resize((24, 32)), RandomAffine(15, translate=(0.1, 0.1), scale=(0.9, 1.1), interpolation=nearest)",
    "Resize((24, 32)), RandomPerspective(0.3, p=1.0, interpolation=nearest)",
])
def test_a_datasets_keypoints_and_boxes_land_on_their_block(blocks, chain):
    root, centres = blocks
    loader = stoker.DataLoader(Blocks(root, centres), batch_size=6, shuffle=True, seed=4, num_workers=2,
                               transforms=chain + ", ToUint8")
    checked = 0
    for epoch in range(3):
        for x, target in loader:
            for k in range(x.shape[0]):
                eyes, block = target["eyes"][k], target["block"][k]
                if not bool(eyes[:, 2].all()):
                    continue  # the block left the image
                mid_x, mid_y = eyes[:, 0].mean().item(), eyes[:, 1].mean().item()
                seen_x, seen_y = bright_centre(x[k])
                assert abs(seen_x - mid_x) < 1.0 and abs(seen_y - mid_y) < 1.0, (chain, target["id"][k])
                left, top, width, height, valid = block[0].tolist()
                assert valid == 1 and left <= mid_x <= left + width and top <= mid_y <= top + height
                checked += 1
    assert checked >= 10


def test_points_that_leave_the_image_are_kept_and_marked(blocks):
    root, centres = blocks
    points = np.array([[[1, 1], [39, 29]]] * 6, np.float32)
    boxes = np.array([[[0, 0, 2, 2]]] * 6, np.float32)
    loader = stoker.DataLoader(root, batch_size=6, transforms="Resize((30, 40)), CenterCrop(20)",
                               keypoints=points, boxes=boxes)
    x, y, keypoints, moved = next(iter(loader))
    assert keypoints[0].tolist() == [[-9, -4, 0], [29, 24, 0]]
    assert moved[0, 0].tolist() == [0, 0, 0, 0, 0], "clamped to the image, left empty: marked invalid"


@pytest.mark.parametrize("warp", ["RandomAffine(0, scale=(0.5, 0.5))", "RandomRotation((45, 45))"])
def test_a_point_a_warp_brings_back_into_view_after_a_crop_stays_hidden(tmp_path, warp):
    # A white 40 x 30 image cropped to its central 20 x 20, then warped: the warp fills (black)
    # what it takes from outside the crop, so a point the crop left out is not on the image,
    # wherever the warp puts it. A point is visible exactly where its pixel is the image's.
    (tmp_path / "c").mkdir()
    Image.fromarray(np.full((30, 40, 3), 255, np.uint8)).save(tmp_path / "c" / "white.png")
    grid = np.array([[x + 0.5, y + 0.5] for y in range(1, 30, 3) for x in range(1, 40, 3)], np.float32)
    loader = stoker.DataLoader(tmp_path, batch_size=1, keypoints=grid[None],
                               transforms=f"CenterCrop(20, resize=False), {warp}, ToUint8")
    x, _, points = next(iter(loader))
    checked, _ = visible_where_white(x[0, 0], points[0], warp)
    assert checked >= 30


def test_chains_targets_cannot_follow_are_refused(blocks):
    root, centres = blocks
    with pytest.raises(ValueError, match="keypoints and boxes cannot follow ElasticTransform"):
        stoker.DataLoader(Blocks(root, centres), transforms="Resize((24, 32)), ElasticTransform()")
    with pytest.raises(ValueError, match=r"keypoints='<array of shape \(6, 2\)>': an array of shape \(N, P, 2\)"):
        stoker.DataLoader(root, keypoints=np.zeros((6, 2)), transforms="Resize((8, 8))")


def test_torchvision_v2_moves_boxes_as_stoker_does(blocks):
    v2 = pytest.importorskip("torchvision.transforms.v2")
    tv_tensors = pytest.importorskip("torchvision.tv_tensors")
    root, centres = blocks
    boxes = np.array([[[x - 2, y - 2, x + 2, y + 2]] for x, y in centres], np.float32)
    loader = stoker.DataLoader(root, batch_size=6, transforms="Resize((24, 32)), RandomHorizontalFlip(1.0), ToUint8",
                               boxes=boxes)
    x, y, moved = next(iter(loader))
    for k in range(6):
        image = torch.from_numpy(np.array(Image.open(root / "c" / f"{k}.png"))).permute(2, 0, 1)
        b = tv_tensors.BoundingBoxes(torch.from_numpy(boxes[k]), format="XYXY", canvas_size=(30, 40))
        _, expected = v2.Compose([v2.Resize((24, 32)), v2.RandomHorizontalFlip(1.0)])(image, b)
        assert torch.allclose(moved[k, :, :4], expected.float(), atol=1e-4)


def write_pts(path, points):
    """An iBUG/300W landmark file."""
    body = "\n".join(f"{x} {y}" for x, y in points)
    path.write_text(f"version: 1\nn_points:  {len(points)}\n{{\n{body}\n}}\n")


def test_landmark_files_beside_the_images_give_the_keypoints(blocks):
    root, centres = blocks
    for i, (x, y) in enumerate(centres):
        write_pts(root / "c" / f"{i}.pts", [(x, y), (x + 2, y + 1)])
    loader = stoker.DataLoader(root, batch_size=6, keypoints=".pts", transforms="Resize((15, 20)), ToUint8")
    x, labels, keypoints = next(iter(loader))
    assert keypoints.tolist() == [[[x / 2, y / 2, 1], [(x + 2) / 2, (y + 1) / 2, 1]] for x, y in centres]
    # the same as .json and .txt side files, and as a CSV column naming each row's file
    for i, (x, y) in enumerate(centres):
        (root / "c" / f"{i}.json").write_text(f"[[{x}, {y}], [{x + 2}, {y + 1}]]")
        (root / "c" / f"{i}.txt").write_text(f"# x y\n{x}, {y}\n{x + 2} {y + 1}\n")
    (root / "list.csv").write_text("path,landmarks\n" + "".join(f"c/{i}.png,c/{i}.pts\n" for i in range(6)))
    for data, given in ((root, ".json"), (root, ".txt"), (root / "list.csv", "landmarks")):
        loader = stoker.DataLoader(data, batch_size=6, keypoints=given, transforms="Resize((15, 20)), ToUint8")
        assert next(iter(loader))[-1].tolist() == keypoints.tolist(), given


def test_side_files_that_are_missing_or_bad_are_one_line(blocks):
    root, centres = blocks
    for i in range(5):
        write_pts(root / "c" / f"{i}.pts", [(1, 2), (3, 4)])
    with pytest.raises(ValueError, match=r"keypoints='\.pts': 1 of 6 samples have no side file \(first: .*5\.pts\)"):
        stoker.DataLoader(root, keypoints=".pts", transforms="Resize((8, 8))")
    write_pts(root / "c" / "5.pts", [(1, 2)])
    with pytest.raises(ValueError, match=r"the side files differ in shape \(.*0\.pts: \(2, 2\), .*5\.pts: \(1, 2\)\)"):
        stoker.DataLoader(root, keypoints=".pts", transforms="Resize((8, 8))")
    (root / "c" / "5.pts").write_text("version: 1\nn_points: 3\n{\n1 2\n3 4\n}\n")
    with pytest.raises(ValueError, match=r"5\.pts: n_points says 3, the block holds 2; kinds read: \.pts"):
        stoker.DataLoader(root, keypoints=".pts", transforms="Resize((8, 8))")
    with pytest.raises(ValueError, match=r"keypoints='\.mat': an array, .* one of \.pts, \.json, \.npy"):
        stoker.DataLoader(root, keypoints=".mat", transforms="Resize((8, 8))")


class Labelled(torch.utils.data.Dataset):
    """Images whose every channel holds their segmentation labels, with those labels as a Mask."""

    def __init__(self, root):
        self.paths, self.labels = [], []
        (root / "c").mkdir(exist_ok=True)
        for i in range(4):
            y, x = np.mgrid[0:26, 0:30]
            labels = (1 + (y * 7 + x * 3 + i) % 250).astype(np.uint8)
            path = root / "c" / f"m{i}.png"
            Image.fromarray(np.stack([labels] * 3, axis=-1)).save(path)
            self.paths.append(str(path))
            self.labels.append(labels)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.paths[i], {"mask": stoker.Mask(self.labels[i])}


def test_a_mask_moves_as_its_image_does_under_nearest_sampling(tmp_path):
    chain = "RandomCrop(24, padding=4), RandomHorizontalFlip(), RandomRotation(40, interpolation=nearest), ToUint8"
    loader = stoker.DataLoader(Labelled(tmp_path), batch_size=4, shuffle=True, seed=2, transforms=chain)
    for epoch in range(3):
        x, target = next(iter(loader))
        loader.set_epoch(epoch + 1)
        mask = target["mask"]
        assert mask.shape == (4, 24, 24) and mask.dtype == torch.uint8
        assert (mask != x[:, 0]).float().mean() < 0.01  # a tie between two pixels may round either way
        assert (mask == 0).any(), "padding and the turn's corners show no source: label 0"


def test_a_csv_lists_column_of_json_arrays_gives_the_keypoints(blocks):
    root, centres = blocks
    rows = ["path,label,landmarks,caption"]
    for i, (x, y) in enumerate(centres):
        rows.append(f'c/{i}.png,{i % 2},"[[{x}, {y}], [{x + 1}, {y}]]",block {i}')
    (root / "list.csv").write_text("\n".join(rows) + "\n")
    loader = stoker.DataLoader(root / "list.csv", batch_size=6, keypoints="landmarks",
                               transforms="Resize((15, 20)), ToUint8")
    x, labels, captions, keypoints = next(iter(loader))
    assert labels.tolist() == [0, 1, 0, 1, 0, 1] and list(captions) == [f"block {i}" for i in range(6)]
    assert keypoints[:, 0].tolist() == [[x / 2, y / 2, 1] for x, y in centres], "halved by the resize"
    # A pose list with its landmarks beside it: the numbers stay the targets.
    rows = ["path,yaw,pitch,landmarks"] + [f'c/{i}.png,{i}.5,-{i},"[[{x}, {y}]]"' for i, (x, y) in enumerate(centres)]
    (root / "poses.csv").write_text("\n".join(rows) + "\n")
    x, pose, keypoints = next(iter(stoker.DataLoader(root / "poses.csv", batch_size=6, keypoints="landmarks",
                                                     transforms="Resize((15, 20)), ToUint8")))
    assert pose.tolist() == [[i + 0.5, -i] for i in range(6)]
    assert keypoints[:, 0].tolist() == [[x / 2, y / 2, 1] for x, y in centres]
    (root / "ragged.csv").write_text('path,landmarks\nc/0.png,"[[1, 2]]"\nc/1.png,"[[1, 2], [3, 4]]"\n')
    with pytest.raises(ValueError, match=r"keypoints='landmarks': the rows' arrays differ in shape"):
        stoker.DataLoader(root / "ragged.csv", keypoints="landmarks", transforms="Resize((8, 8))")
    with pytest.raises(ValueError, match=r"keypoints='pose': an array, an \.npy file, a CSV list's column"):
        stoker.DataLoader(root / "list.csv", keypoints="pose", transforms="Resize((8, 8))")
    with pytest.raises(ValueError, match=r"^keypoints='.*/landmark\.npy': an \.npy file, and there is none at this "
                                         r"path$"):
        stoker.DataLoader(root / "list.csv", keypoints=str(root / "landmark.npy"), transforms="Resize((8, 8))")
    with pytest.raises(ValueError, match=r"^keypoints='.*/landmark\.npy': an \.npy file, and there is none"):
        stoker.DataLoader(root / "list.csv", keypoints=root / "landmark.npy", transforms="Resize((8, 8))")


class PlainLandmarks(Blocks):
    """Landmarks returned as torch's DataLoader takes them, a plain array: stoker cannot move them."""

    def __getitem__(self, i):
        x, y = self.centres[i]
        return str(self.root / "c" / f"{i}.png"), np.array([[x - 1, y], [x + 1, y]], np.float32)


def test_flip_pairs_without_keypoints_to_swap_are_refused(blocks):
    root, centres = blocks
    chain = "Resize((8, 8)), RandomHorizontalFlip()"
    with pytest.raises(ValueError, match=r"^flip_pairs='<1 pair>': the pairs of keypoints a horizontal flip swaps, "
                                         r"and there are no keypoints here; PlainLandmarks\[0\] holds no "
                                         r"stoker.Keypoints, and an array or list in an item is passed through "
                                         r"unmoved: wrap the points, stoker.Keypoints\(points\)"):
        stoker.DataLoader(PlainLandmarks(root, centres), flip_pairs=[(0, 1)], transforms=chain)
    with pytest.raises(ValueError, match=r"^flip_pairs='<2 pairs>': .* no keypoints here; give them with keypoints="):
        stoker.DataLoader(root, flip_pairs=[(0, 1), (2, 3)], transforms=chain)
    stoker.DataLoader(Blocks(root, centres), flip_pairs=[(0, 1)], transforms=chain)  # its items hold Keypoints


def test_flip_pairs_naming_a_point_twice_are_refused(blocks):
    root, centres = blocks
    points = np.zeros((6, 3, 2), np.float32)
    with pytest.raises(ValueError, match=r"^flip_pairs names point 1 in two pairs, \(0, 1\) and \(1, 2\); a flip "
                                         r"swaps each point with one other$"):
        stoker.DataLoader(root, keypoints=points, flip_pairs=[(0, 1), (1, 2)], transforms="Resize((8, 8))")
    with pytest.raises(ValueError, match=r"^flip_pairs names point -1; points are numbered from 0$"):
        stoker.DataLoader(root, keypoints=points, flip_pairs=[(0, -1)], transforms="Resize((8, 8))")


def test_flip_pairs_naming_a_point_past_the_keypoints_are_refused_when_the_loader_is_made(blocks):
    # Found only at the first flipped sample otherwise, as a worker's failure on that image.
    root, centres = blocks
    points = np.zeros((6, 3, 2), np.float32)
    with pytest.raises(ValueError, match=r"^flip_pairs names point 3 in \(0, 3\) and keypoints= has 3 points a "
                                         r"sample \(0 to 2\)$"):
        stoker.DataLoader(root, keypoints=points, flip_pairs=[(0, 3)], transforms="Resize((8, 8)), RandomHorizontalFlip()")
    np.save(root / "points.npy", points)
    with pytest.raises(ValueError, match=r"^flip_pairs names point 4 in \(4, 1\) and keypoints= has 3 points"):
        stoker.DataLoader(root, keypoints=str(root / "points.npy"), flip_pairs=[(4, 1)], transforms="Resize((8, 8))")


@pytest.mark.parametrize("rows", [2, 3])
def test_points_given_as_columns_are_told_to_transpose(rows):
    # 300W-LP's pt2d is (2, 68), AFLW2000's pt3d_68 (3, 68): a head-pose script's landmarks as read from the .mat.
    with pytest.raises(ValueError) as raised:
        stoker.Keypoints(np.zeros((rows, 68), np.float32))
    assert str(raised.value) == (
        f"Keypoints: an array of shape (P, 2) or (P, 3), or (T, P, 2) or (T, P, 3) beside a clip; this one is "
        f"({rows}, 68), its points in columns (as 300W-LP's pt2d (2, 68) and AFLW2000's pt3d_68 (3, 68) hold them): "
        "give points[:2].T, (68, 2)")


def test_an_array_of_points_in_columns_is_told_to_transpose(blocks):
    root, _ = blocks
    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(root, keypoints=np.zeros((6, 2, 68), np.float32), transforms="Resize((8, 8))")
    assert str(raised.value) == (
        "keypoints='<array of shape (6, 2, 68)>': an array of shape (N, P, 2) or (N, P, 3), one row per sample (6); "
        "its points are in columns, as 300W-LP's pt2d (2, 68) holds them: give array[:, :2].transpose(0, 2, 1), "
        "(6, 68, 2)")


def test_a_third_column_that_is_not_a_visibility_is_refused(blocks):
    # AFLW2000's pt3d_68, transposed to (68, 3), holds x, y and a depth.
    root, centres = blocks
    points = np.zeros((6, 2, 3), np.float32)
    points[..., 2] = 1
    points[4, 1, 2] = 12.5
    with pytest.raises(ValueError, match=r"^keypoints: the third column of \(P, 3\) points is their visibility, 0 "
                                         r"or 1, and sample 4's point 1 has 12.5; for \(x, y, z\) points give "
                                         r"points\[\.\.\., :2\], for COCO's flags v give \(v > 0\)$"):
        stoker.DataLoader(root, keypoints=points, transforms="Resize((8, 8))")
    with pytest.raises(ValueError, match=r"^Keypoints: .* and point 1 has 12.5; for \(x, y, z\) points"):
        stoker.Keypoints(points[4])
    points[4, 1, 2] = 0
    assert stoker.Keypoints(points[4]).moved(points[4]).shape == (2, 3)
    stoker.DataLoader(root, keypoints=points, transforms="Resize((8, 8))")


def test_flip_negate_negates_a_head_poses_yaw_and_roll_exactly_where_flipped(blocks):
    root, centres = blocks
    rows = ["path,yaw,pitch,roll"] + [f"c/{i}.png,{i + 1},{10 * (i + 1)},{100 * (i + 1)}" for i in range(6)]
    (root / "poses.csv").write_text("\n".join(rows) + "\n")
    loader = stoker.DataLoader(root / "poses.csv", batch_size=6, shuffle=True, seed=3, return_params=True,
                               flip_negate=["yaw", "roll"], transforms="Resize((8, 8)), RandomHorizontalFlip()")
    flips = 0
    for epoch in range(4):
        for x, pose, params in loader:
            i = params["index"].float() + 1
            sign = torch.where(params["hflip"], -1.0, 1.0)
            assert pose.tolist() == torch.stack([sign * i, 10 * i, sign * 100 * i], 1).tolist()
            flips += int(params["hflip"].sum())
    assert 0 < flips < 24
    with pytest.raises(ValueError, match=r"flip_negate names target 'heading', and .* has the target columns "
                                         r"yaw, pitch and roll"):
        stoker.DataLoader(root / "poses.csv", flip_negate="heading", transforms="Resize((8, 8))")
    with pytest.raises(ValueError, match=r"flip_negate names float targets .* has class ids; leave it out"):
        stoker.DataLoader(root, flip_negate="yaw", transforms="Resize((8, 8))")
