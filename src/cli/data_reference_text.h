// The hand-written parts of the data reference page (docs/reference/data.md): what concerns no
// single format or transform. data_reference.cpp puts them between the sections it writes from
// the declarations. Markdown; links are relative to docs/reference/.
#pragma once

#include <string_view>

namespace stoker::cli::data_reference_text {

inline constexpr std::string_view kIntro = R"md(# Datasets and transforms

What `stoker train --data`, `stoker bench loader --data`, `stoker scan --data` and
`stoker.DataLoader(data)` read, and the transform chains they take. Landmarks, clips, captions,
boxes and masks, with an example of each: [own-data.md](../guide/own-data.md).

)md";

inline constexpr std::string_view kFormats = R"md(## Formats

`--data` (and `stoker.DataLoader`'s first argument) names one of these; a file's kind is told by
its extension.

)md";

inline constexpr std::string_view kFormatsAfter = R"md(
A pattern (`*`, `?`, `[…]`, or WebDataset's `train-{000000..000146}.tar` and `{a,b}`, quoted so
that stoker expands it, not the shell) names a dataset written in shards: the matching files, in
name order, are one dataset ([train.md](../guide/train.md#feature-vectors)).

## Image files

An image file's format is told from its bytes, not its name: a WebP or TIFF named `.jpg`, as
scraped sets hold them, reads as what it is, as PIL reads it. JPEG (baseline, progressive,
gray, CMYK), PNG, WebP (lossy, lossless, with alpha, the first frame of an animation), GIF, BMP (1 to
32 bits, bit fields, RLE4/RLE8), PNM (P1 to P6, any maxval) and TIFF (its first image: gray,
palette, RGB, JPEG in TIFF; strips or tiles; none, LZW, deflate, PackBits, JPEG) give the
pixels Pillow's `Image.open(f).convert("RGB")` gives, alpha dropped, not composited: exactly,
lossy WebP within one level. 16-bit samples become 8 bits as Pillow makes them: color ones
their high byte, gray ones (Pillow's mode I) clipped at 255. GIF gives its first frame as
Pillow's `convert("RGB")` does: on the logical screen, the frame's transparent index (else index 0)
around the frame, the local colour table else the global one, a transparent index as its colour;
`.gif` is not in ImageFolder's extensions, so a folder scan skips it, but a GIF named `.jpg`, a
WebDataset `.gif` member or an `Image.open` item decodes. AVIF, HEIF, JPEG 2000 and
JPEG XL files are bad samples saying what they are ("not a JPEG, PNG, WebP, BMP, PNM, TIFF or GIF
(looks like AVIF)"); so are damaged and truncated files, with the reason, and images of more
than `max_pixels` pixels (89,478,485 by default, Pillow's limit), refused from their header
([decode.md](../design/decode.md)). A plain (ASCII) PNM whose raster ends early is one too, as
Pillow refuses it ("not enough image data"; "Reached EOF while reading data" in later Pillow),
also where the file ends inside a number: Pillow 9.4 then repeats that number to the end of the
raster (its decoder keeps a number split by the end of a read and stitches it again at the end
of the file), an error of Pillow's that later Pillow corrected and stoker does not copy.

)md";

inline constexpr std::string_view kTransforms = R"md(## Transforms

Transforms use torchvision's names and semantics, and a chain pasted from a script reads as
written: `transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor(),
transforms.Normalize(mean=[…], std=[…])])`, `T.` and `v2.` prefixes, a bare list, or in a YAML
config a `transforms:` list, one transform per item. Arguments bind as Python binds them: by
position in the order listed, or by keyword. `stoker.DataLoader` also takes the torchvision
objects themselves and reads them from their attributes ([python.md](../guide/python.md)).

The chain runs in one fixed order whatever order it is written in: `BoxCrop`, geometry (with
`Pad`), flips, `Grayscale`, `RandomRotation`, `RandomAffine`, `RandomPerspective`, `ElasticTransform`, the
automatic augmentation, `ColorJitter`, `RandomGrayscale`, `GaussianBlur`, the colour operations,
`Normalize`, `RandomErasing` (`include/stoker/data/transform.h`). Evaluation (the validation
chain, and `stoker evaluate`'s) makes each random transform its fixed counterpart or drops it:
the table says what it makes of each transform's example below. With `decode="gpu"`
(`stoker.DataLoader(device="cuda")`), the GPU finishes the transforms marked "on the GPU"
after nvJPEG; a chain with any other transform, or with a `Float16` output, decodes on the CPU
("CPU decoding"; [decode.md](../design/decode.md#gpu-decoding)).

)md";

inline constexpr std::string_view kCsvFileLists = R"md(## CSV file lists

A CSV file list has one sample per row: the path of its image file (relative to the list's
folder, or absolute), first or in the column its header names (**Paths** below), then its
targets and any other columns. A `.tsv` list is the same
with tabs between the cells, as open_clip's `CsvDataset(sep="\t")` reads its `filepath` and
`title` columns; everything below holds for it, a tab where a comma is written. Its rules are
declared once, in `src/data/source/list_columns.h` (`open_file_list` in
`include/stoker/data/source.h`):

- **Header.** The first line is a header when none of its fields is a number and its first
  field does not look like a path: no `/` or `\` in it and no file extension (`.jpg`, `.png`,
  a `.` and 1 to 5 letters or digits at its end). `path,caption` is a header; `a.jpg,a dog`,
  `img/001,a dog` and `001,3` are rows. A list whose first path has neither a folder nor an
  extension, and whose first row holds no number, needs a header line.
- **Paths.** With a header, the paths are in the first column named `path`, `filepath`,
  `file_path`, `filename`, `file_name`, `file`, `image`, `image_path`, `img` or `img_path`
  (any case), wherever it stands, and the other columns keep their order:
  `title<TAB>filepath`, as open_clip reads by its `img_key`, gives `(images, titles)`. Without
  such a name, and without a header, the first column holds them.
- **Cells.** Cells read as Python's `csv` module and pandas' `read_csv` read them (open_clip's
  `CsvDataset` among them). They may be quoted: `"a dog, sleeping"`, and `""` for a quote
  inside quotes; a quoted cell keeps its text as it is, spaces, tabs and line breaks included
  (in a `.tsv`, a tab inside quotes is part of the cell; commas need no quotes there), and a
  row holding a line break inside quotes goes on to the lines after it. A quote opens quoting
  only at a cell's start (spaces before it are dropped); elsewhere it is a character
  (`a 12" record`). Text keeps the spaces around an unquoted cell as well; a path, a number
  and a header's name are read without them. Blank lines are skipped, and so is a UTF-8 byte
  order mark at the file's start (Excel's "CSV UTF-8", as pandas skips it). A column whose cells are all integers holds integers, all
  numbers: numbers, all bracketed lists (`"[[40.5, 61], [52, 60.5]]"`): JSON arrays, else text
  (`42` in a column of captions is text).
- **Targets.** With a header, the columns named `label`, `labels`, `target`, `targets`, `y` or
  `class` (any case; the names a CSV feature table's target goes by). A header that names none
  over columns that all hold numbers or JSON arrays makes the columns of numbers the targets
  (`path,yaw,pitch,roll`, also with a `landmarks` column of arrays after them). Without a
  header, every column of numbers after the path. One integer target is a class id; floats,
  or several targets, are a regression.
- **Other columns** pass through, in their order: `path,label,caption` gives
  `(images, labels, captions)` in Python, `path,caption` `(images, captions)` (no target
  column), `path,caption,id` `(images, captions, ids)`: text as a tuple of `str` (bytes that are
  not UTF-8 as `os.fsdecode` makes them), integers as an int64 tensor, numbers as a float32
  one. A bad image's slot takes its substitute's cells, as it takes its label. A column of
  JSON arrays named by `keypoints=` or `boxes=` is read as those targets instead
  ([own-data.md](../guide/own-data.md#boxes-and-masks)).
  `stoker train` and `stoker evaluate` read the path and the targets alone and say so on stderr
  (`ignoring columns caption, id of list.csv: stoker train uses path and label`); a list with
  no target column is one line saying how to name one.

A first row of one cell (a `.tsv` written with commas, or a `.csv` with tabs, is told which name
suits it), a row with fewer cells than the header (or the first row), or more (a comma in an
unquoted caption, a tab in a `.tsv`), a quote not closed by the end of the file, an empty cell in a
column of numbers and a target that is not a finite number each stop with one line naming the
file and the line.

)md";

inline constexpr std::string_view kClips = R"md(## Clips

A sample may be a clip: an ordered list of frames (JPEG or PNG), K of which make the sample
(`stoker.DataLoader(frames_per_clip=K, frame_step=S)`, `stoker bench loader --frames-per-clip K
--frame-step S`; [own-data.md](../guide/own-data.md#clips)). `stoker train` refuses clips: its
models take single images. Clips are read from:

- a folder `root/<class>/<clip>/<frame>`, when clips are asked for (without them the same
  folder is an image folder of its frames): each folder right below a class folder is a
  sample, its frames the image files (`.jpg`, `.png`, `.webp`, ...) directly in it, in name order with
  runs of digits compared as numbers (`frame_2` before `frame_10`). An image directly in a
  class folder, or a clip folder without frames, stops with one line naming it; other files,
  and folders inside a clip, are skipped and counted;
- a CSV file list whose path cell lists a clip's frames in order, separated by `|`:
  `v1/0001.jpg|v1/0002.jpg|v1/0003.jpg,1` (each relative to the list, as a single path is; a
  row of one path is a clip of one frame), or names a folder of frames, a video's
  (`videos/vid_0001,1`: its image files, in the clip folder's order; a
  folder without frames stops with one line naming it). A list with such a cell holds clips,
  and is refused without `frames_per_clip`. A file name containing `|` cannot be listed. The cell
  names its clip (`stats()['bad_samples']`, `stoker scan -o`, exclude lists); a message line
  shows a clip of more than two frames as its first and last and their count
  (`v1/0001.jpg|...|v1/0300.jpg (300 frames)`);
- a Dataset object whose item is `(frames, target, ...)` (or the frames alone): a list or
  tuple of images, each as a Dataset's image may be, a NumPy array of the frames' paths
  (`np.array(paths)[np.linspace(0, n - 1, K).astype(int)]`), or one uint8 array of 4
  dimensions whose first is the frames (`(T, H, W, C)` or `(T, C, H, W)`; a grayscale
  video's `(T, H, W)` is `frames[..., None]`). Its frames keep the channels a Dataset's single
  images keep (torchvision's `ToTensor`'s): one for PIL images of mode L and `(T, H, W, 1)`
  frames, three for RGB; the first frame of the first item sets the count.

Which frames: with span L = (K − 1) × S + 1 and a clip of n frames, frame k of the sample is
t + k × S. In training (`clip_start="random"`) the start t is drawn uniformly from
0 … max(0, n − L), one draw from the sample's own random stream before the transform's, so
batches stay bit-identical for any worker count; in evaluation (`"center"`) t = ⌊(n − L) / 2⌋,
the centre clip, as torchvision's clip samplers take a random clip in training and the
centre one to evaluate. A clip shorter than L (n < L) starts at 0 and repeats its last
frame: frame k is min(k × S, n − 1). The transform's random parameters are drawn once per clip, and
every frame takes them. Frames may differ in size and aspect (face crops saved one per frame
by a detector: 143x171, then 150x168): each frame's geometry is made for its own size, as
torchvision's chain run on each frame under one seed per clip makes it. `Resize(n)` resizes
each frame by its own shorter side, `CenterCrop` takes each frame's centre, a random crop's
offsets are the clip's one draw u placed at the same fraction of each frame's room (top =
⌊u × (room + 1)⌋, room = resized height − crop height; left likewise: torchvision's reseeded
`randint` takes its draw modulo each frame's room, so there a frame whose room differs jumps to
an unrelated offset, where stoker keeps the clip's one position), `RandomResizedCrop`
tries the clip's scales and ratios against each frame's size, and `BoxCrop` crops each frame in
its own pixels. Every other draw (flip, colour, erasing, …) is the clip's, the first chosen
frame's. `return_params`' `source_size` `(N, K, 2)` and `box` `(N, K, 4)` are each frame's;
its other entries are the clip's. A chain that neither resizes nor crops needs frames of one
size. A batch is `(N, K, C, H, W)` (NHWC: `(N, K, H, W, C)` in memory).

A clip may carry a box and landmarks per frame of the video, NaN where there is none: a
Dataset's `stoker.Boxes` `(T, 4)` and `stoker.Keypoints` `(T, P, 2)` or `(T, P, 3)` in its
target, a row per frame; for clips read from a path, `boxes=` and `keypoints=` with a row per
frame: an array of every frame's rows in the listing's order (clip after clip) or a list of one
array per clip, the name of a file in each clip's folder (`boxes="boxes.npy"`: `.npy`, `.json`
(a frame's row `[]` or `null` where there is none, as detectors write it),
or `.txt` / `.csv` with a line per frame, a box's 4 numbers or the landmarks' x y pairs
`x1 y1 x2 y2 …`), the extension of the file beside each frame (`keypoints=".pts"`; every frame
needs its file, as every image does: a frame without a face has one of NaN rows), or a CSV
list's column (a JSON array or a file per clip). A clip whose rows differ in number from its
frames is refused in one line naming it (a Dataset's: a bad sample). Each chosen frame's rows
move with that frame and come back `(N, K, 5)` and `(N, K, P, 3)`. `BoxCrop` crops each chosen
frame around its own box ([BoxCrop](#boxcrop)); the crops differ in size, and the chain after it
takes each as a frame of its own size (above), with the clip's one margin;
`BoxCrop(union=True)` crops them all around the union of their boxes instead.
`return_params`' `box` is each frame's crop, `(N, K, 4)`. Masks are refused with clips:
read the frames as single images with their masks instead.

)md";

inline constexpr std::string_view kSplits = R"md(## Splits

`split` (`stoker scan --split`, `stoker bench loader --split`, `stoker.DataLoader(split=…)`)
names a part of the data. The names are declared once, in `include/stoker/data/split.h`:

)md";

inline constexpr std::string_view kSplitsAfter = R"md(
The arrays column names the features; the targets carry the same suffix (`y_val`, `labels_val`),
and any feature or target name stoker reads takes it (`X_test`, `features_valid`). In an HDF5
file, a group named as a suffix without its `_` (`val/`, `validation/`, `test/`) holding plain
`x` / `y` is that split; in a `.pt` file, a dict's entry keyed so (`{"val": TensorDataset(x, y)}`).
Suffixes are tried in the order listed. An image folder, a CSV list or table, WebDataset shards
and a lone `.npy` hold one split, `train`, whatever their names say. Asking a path for a split
it does not hold (`val` of an image folder or of IDX data, `test` of an `.npz` without `x_test`)
or for an unknown name stops with one line saying which splits the path offers, and for a
one-split folder or file, to give the other split's own path (naming a `val`, `valid`,
`validation` or `test` folder or file beside it when there is one). From C++, `splits_of(path)`
lists them and `check_split(path, split)` refuses the others (`include/stoker/data/source.h`).

`stoker train` reads a validation path in two ways of its own, which no `split` name selects:
without `--val-data` or `--val-split`, data that offers `val` or `test` validates on its `val`
split, else its `test` split; a path given with `--val-data` (or to `stoker evaluate`) is read by
its `val` split, else its `test` split, else whole (its plain arrays, an IDX directory's `train-*`
files, a folder).

)md";

inline constexpr std::string_view kLoaderOptions = R"md(## Loader options

The input pipeline's options, declared once in `include/stoker/data/loader_keys.h`, by their
name in each front end: `stoker.DataLoader`'s keyword, the command line's flag
(`stoker bench loader`, `stoker train`) and `stoker train`'s YAML key. A front end without the
option has none; the defaults differ where torch's `DataLoader` has its own.

)md";

inline constexpr std::string_view kTail = R"md(
## Determinism, resume and bad samples

Batches are bit-identical for any worker count (every random choice for sample *i* in epoch
*e* comes from a generator seeded by (seed, e, i)); `loader.state()` saved mid-epoch and
given to `loader.resume()` continues with exactly the same batches. Unreadable or corrupt
files are replaced by a deterministic substitute, counted and listed; more than 1 % bad in an
epoch (`max_bad_fraction`) or any with `on_error=fail` stops the run with the path.

## From C++

From C++ (`include/stoker/data/loader.h`):

```cpp
auto source = stoker::data::open_source("/data/train");
stoker::data::LoaderOptions options;
options.batch_size = 256;
options.workers = 8;
options.transform = stoker::data::parse_transforms("RandomResizedCrop(224), RandomHorizontalFlip(0.5), Normalize");
stoker::data::Loader loader(std::move(source), options);
for (int64_t epoch = 0; epoch < 90; ++epoch) {
  loader.start_epoch(epoch);
  while (stoker::data::Batch batch = loader.next()) {
    // batch.data(): 256 x 3 x 224 x 224 float32; batch.labels(): 256 int64
  }
}
```
)md";

}  // namespace stoker::cli::data_reference_text
