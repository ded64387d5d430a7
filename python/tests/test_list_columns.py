"""A CSV list's columns besides the path and the targets (captions, ids) come with each batch,
after the targets: text as a tuple of str (as torch's default_collate batches the str of
(image, caption) items), integers as int64 tensors, numbers as float32 ones;
a bad image's slot takes its substitute's, as its label; bytes that are not UTF-8 come as
os.fsdecode makes them. A .tsv list (open_clip's) gives the batches of the same list as CSV."""
import csv
import os

import numpy as np
import pytest
import torch
from PIL import Image

import stoker

CHAIN = "CenterCrop((16, 20))"


def write_images(folder, count):
    for i in range(count):
        pixels = np.random.default_rng(i).integers(0, 256, size=(16, 20, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / f"img{i}.png")


def quoted(text):
    return '"' + text.replace('"', '""') + '"'


def caption(i):
    return f'photo {i}, a "good" one' if i % 3 else str(40 + i)  # some look like numbers


def first_pixel(i):
    return int(np.random.default_rng(i).integers(0, 256, size=(16, 20, 3), dtype=np.uint8)[0, 0, 0])


def passes(loader):
    return [tuple(part.clone() if isinstance(part, torch.Tensor) else part for part in batch) for batch in loader]


def test_images_labels_and_captions(tmp_path):
    write_images(tmp_path, 7)
    rows = "".join(f"img{i}.png,{i % 3},{quoted(caption(i))}\n" for i in range(7))
    (tmp_path / "list.csv").write_text("path,label,caption\n" + rows)
    loader = stoker.DataLoader(str(tmp_path / "list.csv"), batch_size=3, transforms=CHAIN)
    got = passes(loader)
    assert [len(batch) for batch in got] == [3, 3, 3]
    images = torch.cat([x for x, _, _ in got])
    labels = torch.cat([y for _, y, _ in got])
    assert all(type(batch) is tuple for _, _, batch in got)  # as torch's default_collate batches str
    captions = [c for _, _, batch in got for c in batch]
    assert labels.dtype == torch.int64 and labels.tolist() == [i % 3 for i in range(7)]
    assert captions == [caption(i) for i in range(7)]
    assert all(isinstance(c, str) for c in captions)  # "42" in a column of captions stays text
    for i in range(7):
        assert round(float(images[i, 0, 0, 0]) * 255) == first_pixel(i)


def test_images_and_captions_without_a_target_column(tmp_path):
    write_images(tmp_path, 5)
    for header in ("path,caption\n", ""):  # a first row of captions is no header
        (tmp_path / "captions.csv").write_text(header + "".join(f"img{i}.png,{quoted(caption(i))}\n"
                                                                for i in range(5)))
        loader = stoker.DataLoader(str(tmp_path / "captions.csv"), batch_size=2, transforms=CHAIN)
        got = passes(loader)
        assert all(len(batch) == 2 for batch in got)
        assert [c for _, batch in got for c in batch] == [caption(i) for i in range(5)]
        assert sum(x.shape[0] for x, _ in got) == 5


def test_captions_ids_and_numbers_in_the_order_of_the_columns(tmp_path):
    write_images(tmp_path, 4)
    rows = "".join(f"img{i}.png,{quoted(caption(i))},{1000 + i},{i / 4}\n" for i in range(4))
    (tmp_path / "list.csv").write_text("path,caption,id,score\n" + rows)
    (x, captions, ids, scores), = passes(stoker.DataLoader(str(tmp_path / "list.csv"), batch_size=4,
                                                           transforms=CHAIN))
    assert x.shape == (4, 3, 16, 20)
    assert captions == tuple(caption(i) for i in range(4))
    assert ids.dtype == torch.int64 and ids.tolist() == [1000, 1001, 1002, 1003]
    assert scores.dtype == torch.float32 and scores.tolist() == [0.0, 0.25, 0.5, 0.75]


@pytest.mark.parametrize("header", [["filepath", "title"], ["filepath", "label", "title"]])
def test_a_tsv_list_gives_the_batches_of_the_same_list_written_as_csv(tmp_path, header):
    """open_clip's layout (CsvDataset(sep="\\t"): filepath, title), with and without a label."""
    write_images(tmp_path, 7)
    titles = [caption(i) for i in range(7)]
    titles[2] = "a dog, sleeping"  # a comma in a .tsv's cell needs no quotes
    titles[4] = "a\ttab, inside"  # a tab does: quoted, as in a CSV a comma is
    cells = [[f"img{i}.png", str(i % 3), titles[i]] if "label" in header else [f"img{i}.png", titles[i]]
             for i in range(7)]
    tsv_cell = (lambda cell: quoted(cell) if '"' in cell or "\t" in cell else cell)
    (tmp_path / "list.csv").write_text(",".join(header) + "\n" +
                                       "".join(",".join(map(quoted, row)) + "\n" for row in cells))
    (tmp_path / "list.tsv").write_text("\t".join(header) + "\n" +
                                       "".join("\t".join(map(tsv_cell, row)) + "\n" for row in cells))
    from_csv, from_tsv = (passes(stoker.DataLoader(str(tmp_path / name), batch_size=3, transforms=CHAIN))
                          for name in ("list.csv", "list.tsv"))
    assert len(from_tsv) == len(from_csv) == 3
    for tsv_batch, csv_batch in zip(from_tsv, from_csv):
        assert len(tsv_batch) == len(header)  # (images, titles) or (images, labels, titles)
        for tsv_part, csv_part in zip(tsv_batch, csv_batch):
            if isinstance(tsv_part, torch.Tensor):
                assert torch.equal(tsv_part, csv_part)
            else:
                assert tsv_part == csv_part
    assert [c for batch in from_tsv for c in batch[-1]] == titles


@pytest.mark.parametrize("name", ["list.csv", "list.tsv"])
def test_cells_read_as_pythons_csv_module_reads_them(tmp_path, name):
    # As csv.writer (and pandas' to_csv) writes them, and csv.reader (and open_clip's
    # CsvDataset, pandas' read_csv) reads them back: quoted cells with the separator, quotes,
    # tabs and line breaks, unquoted ones with spaces around them, text that is not ASCII.
    titles = ["a dog ", "  two spaces first", "line one\nline two", "windows\r\nbreak", "a\ttab", 'he said "hi"',
              '"quoted" start', "café ☕ 猫 ", "a, comma", "   ", "", "ends with a quote\"", "x\n\n\ny", "42 "]
    write_images(tmp_path, len(titles))
    with open(tmp_path / name, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter="\t" if name.endswith(".tsv") else ",")
        writer.writerow(["filepath", "label", "title", "id"])
        writer.writerows([f"img{i}.png", i % 3, title, f" {i} "] for i, title in enumerate(titles))
    with open(tmp_path / name, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t" if name.endswith(".tsv") else ","))[1:]
    assert [row[2] for row in rows] == titles  # what csv reads is what was written
    loader = stoker.DataLoader(str(tmp_path / name), batch_size=len(titles), transforms=CHAIN)
    x, labels, got, ids = next(iter(loader))
    assert got == tuple(row[2] for row in rows)
    assert labels.tolist() == [int(row[1]) for row in rows]
    assert ids.tolist() == [int(row[3]) for row in rows]  # int(" 3 ") is 3: numbers are trimmed
    for i in range(len(titles)):
        assert round(float(x[i, 0, 0, 0]) * 255) == first_pixel(i)


def test_a_tsv_list_written_with_commas_is_one_error_naming_the_csv_extension(tmp_path):
    write_images(tmp_path, 2)
    (tmp_path / "list.tsv").write_text("path,label\nimg0.png,0\nimg1.png,1\n")
    with pytest.raises(stoker.DataError, match=r"list\.tsv:1: expected 'path<tab>target.*; the line has commas and "
                                               r"no tab between its cells: name a comma-separated list \.csv$"):
        stoker.DataLoader(str(tmp_path / "list.tsv"), batch_size=2)


def test_collate_fn_gets_a_tuple_per_sample(tmp_path):
    write_images(tmp_path, 3)
    (tmp_path / "list.csv").write_text("path,label,caption\n" +
                                       "".join(f"img{i}.png,{i},cap {i}\n" for i in range(3)))
    seen = []
    loader = stoker.DataLoader(str(tmp_path / "list.csv"), batch_size=3, transforms=CHAIN,
                               collate_fn=lambda samples: seen.append(samples) or len(samples))
    (x, collated), = passes(loader)
    assert collated == 3 and seen == [[(0, "cap 0"), (1, "cap 1"), (2, "cap 2")]]


def test_collate_fn_gets_a_captions_list_its_captions_alone_an_empty_cell_empty(tmp_path):
    """A path,caption list: one part per sample, given alone, as a Dataset's (image, caption) items' captions."""
    write_images(tmp_path, 3)
    (tmp_path / "list.csv").write_text('filepath,title\nimg0.png,"a dog, asleep"\nimg1.png,\nimg2.png,42\n')
    seen = []
    loader = stoker.DataLoader(str(tmp_path / "list.csv"), batch_size=3, transforms=CHAIN,
                               collate_fn=lambda captions: seen.append(captions) or len(captions))
    (x, collated), = passes(loader)
    assert collated == 3 and seen == [["a dog, asleep", "", "42"]]


def test_a_collate_fn_that_raises_on_a_lists_columns_names_what_it_got(tmp_path):
    write_images(tmp_path, 2)
    (tmp_path / "list.csv").write_text("path,label,caption\nimg0.png,0,cap 0\nimg1.png,1,cap 1\n")
    loader = stoker.DataLoader(str(tmp_path / "list.csv"), batch_size=2, transforms=CHAIN,
                               collate_fn=lambda samples: [image.shape for image, _ in samples])
    with pytest.raises(ValueError, match=r"^collate_fn raised AttributeError \('int' object has no attribute 'shape'\) "
                                         r"on this batch's 2 targets \(a list of tuple\): stoker.DataLoader gives "
                                         r"collate_fn the targets alone, the images batched already; "):
        passes(loader)


def test_a_bad_image_takes_its_substitutes_caption_and_label(tmp_path):
    write_images(tmp_path, 6)
    (tmp_path / "img2.png").write_bytes(b"not an image")
    (tmp_path / "list.csv").write_text("path,label,caption\n" +
                                       "".join(f"img{i}.png,{i},caption {i}\n" for i in range(6)))
    loader = stoker.DataLoader(str(tmp_path / "list.csv"), batch_size=6, transforms=CHAIN, max_bad=0.5)
    (x, labels, captions), = passes(loader)
    # Sample 2 is bad: its slot holds sample 3, with sample 3's label and caption.
    assert labels.tolist() == [0, 1, 3, 3, 4, 5]
    assert captions == ("caption 0", "caption 1", "caption 3", "caption 3", "caption 4", "caption 5")
    assert torch.equal(x[2], x[3])
    assert loader.stats()["bad"] == 1


def test_captions_that_are_not_utf8_come_as_os_fsdecode_makes_them(tmp_path):
    write_images(tmp_path, 2)
    raw = [b"caf\xe9 au lait", "ni\u00f1o".encode()]  # Latin-1 bytes, and UTF-8
    (tmp_path / "list.csv").write_bytes(b"path,label,caption\n" +
                                        b"".join(b"img%d.png,%d,%s\n" % (i, i, raw[i]) for i in range(2)))
    (x, labels, captions), = passes(stoker.DataLoader(str(tmp_path / "list.csv"), batch_size=2, transforms=CHAIN))
    assert captions == (os.fsdecode(raw[0]), "ni\u00f1o")
    assert os.fsencode(captions[0]) == raw[0]


def test_a_row_with_a_missing_cell_is_one_error_naming_file_and_line(tmp_path):
    write_images(tmp_path, 2)
    (tmp_path / "list.csv").write_text("path,label,caption\nimg0.png,0,a dog\nimg1.png,1\n")
    with pytest.raises(stoker.DataError, match=r"list\.csv:3: 2 cells, but the header \(path, label, caption\) "
                                               r"has 3"):
        stoker.DataLoader(str(tmp_path / "list.csv"), batch_size=2)


def test_the_source_names_its_columns(tmp_path):
    write_images(tmp_path, 1)
    (tmp_path / "list.csv").write_text("path,label,caption,id\nimg0.png,0,a dog,7\n")
    loader = stoker.DataLoader(str(tmp_path / "list.csv"), batch_size=1, transforms=CHAIN)
    assert loader.source.columns == {"path": "path", "targets": ["label"],
                                     "extra": [("caption", "text"), ("id", "integer")]}
