"""examples/imagenet_distributed.py (PyTorch's ImageNet example on stoker.DataLoader) on three
ranks with gloo: the training shards are disjoint but for DistributedSampler's padding and
cover every image, each epoch reshuffles, and every rank reports the same validation figures
over the whole validation set, leftover samples included."""
import collections
import json
import pathlib
import re
import shutil

from conftest import write_image_folder
from ranks import run_ranks

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "imagenet_distributed.py"


def test_the_imagenet_example_on_three_ranks(tmp_path):
    # One image per class, so the targets a rank trained on are the images it saw. DistributedSampler
    # pads 25 training images to 27 (two repeats) and leaves two of 26 validation images over.
    write_image_folder(tmp_path / "data" / "train", classes=25, per_class=1, kind="jpg", seed=3)
    val = write_image_folder(tmp_path / "data" / "val", classes=25, per_class=1, kind="jpg", seed=4)
    shutil.copy(val / "class_7" / "img_000.jpg", val / "class_7" / "img_001.jpg")
    outputs = run_ranks(EXAMPLE, 3, [tmp_path / "data", "--epochs", "2", "-b", "5", "-j", "1", "--image-size", "32",
                                     "--seed", "0", "--record-targets", tmp_path / "targets"], timeout=300)
    records = {rank: [json.loads(line) for line in (tmp_path / "targets" / f"rank{rank}.jsonl").read_text().splitlines()]
               for rank in range(3)}
    for epoch in (0, 1):
        shards = [records[rank][epoch]["targets"] for rank in range(3)]
        assert [len(s) for s in shards] == [9, 9, 9]
        counts = collections.Counter(shards[0] + shards[1] + shards[2])
        assert set(counts) == set(range(25)), "every training image, on one rank or another"
        assert sum(counts.values()) - len(counts) == 2, "two repeats: DistributedSampler's padding"
    assert records[0][0]["targets"] != records[0][1]["targets"], "set_epoch reshuffles"

    validation = []
    for out in outputs:
        lines = re.findall(r"epoch (\d): train 9 images .* · (val loss .* over (\d+) images)", out)
        assert [epoch for epoch, _, _ in lines] == ["0", "1"], out
        assert all(count == "26" for _, _, count in lines), "the leftover images are evaluated too"
        validation.append([figures for _, figures, _ in lines])
    assert validation[0] == validation[1] == validation[2], "the ranks report the same validation figures"
