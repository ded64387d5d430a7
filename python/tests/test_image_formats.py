"""WebP, BMP, PNM, TIFF and PNG files of every kind, made here with Pillow (16-bit PNGs by hand),
read by stoker's decoders give what torchvision's ImageFolder gives through PIL's
Image.open(f).convert("RGB"): the same pixels (lossy WebP within one level: the same libwebp),
whatever the file's extension says; a damaged one is a bad sample named with its reason."""

import io
import struct
import zlib

import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms as T
from PIL import Image

import stoker

H, W = 30, 40
WHOLE = T.Compose([T.CenterCrop((H, W)), T.PILToTensor()])  # every file is W x H: the image as it is


def _convert_to_rgb(image):  # open_clip.transform's, made here as open_clip defines it
    return image.convert("RGB")


_convert_to_rgb.__module__ = "open_clip.transform"


def _photo(seed):
    """A smooth picture with some noise: what lossy codecs are made for."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:H, 0:W]
    base = np.stack([x * 6, y * 8, (x + y) * 3], axis=-1) + rng.integers(0, 40, (H, W, 3))
    return np.clip(base, 0, 255).astype(np.uint8)


def _rgba(seed):
    rgba = np.concatenate([_photo(seed), np.random.default_rng(seed).integers(0, 256, (H, W, 1))], axis=-1)
    return Image.fromarray(rgba.astype(np.uint8), "RGBA")


def _animated_webp():
    frames = [Image.fromarray(_photo(20 + k)) for k in range(3)]
    out = io.BytesIO()
    frames[0].save(out, "WEBP", save_all=True, append_images=frames[1:], lossless=True, duration=40)
    return out.getvalue()


def _encoded(image, fmt, **options):
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def _png16(pixels):
    """A 16-bit PNG of uint16 `pixels`: (H, W) grey, (H, W, 2) grey with alpha, (H, W, 3) RGB or
    (H, W, 4) RGBA (PIL writes 16-bit grey alone)."""
    height, width = pixels.shape[:2]
    rows = b"".join(b"\0" + pixels[y].astype(">u2").tobytes() for y in range(height))
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[1 if pixels.ndim == 2 else pixels.shape[2]]

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 16, color_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _sixteen_bit(seed, channels):
    """(H, W[, channels]) uint16 values, a third of them under 256 (PIL's grey keeps those, clips the rest)."""
    values = np.random.default_rng(seed).integers(0, 65536, (H, W, channels))
    values[: H // 3] %= 256
    return values[..., 0] if channels == 1 else values


def _every_kind():
    """name -> (file bytes, whether the codec is lossy)."""
    rgb = Image.fromarray(_photo(1))
    gray = rgb.convert("L")
    palette = rgb.quantize(37)
    bilevel = gray.point(lambda v: 255 if v > 100 else 0).convert("1")
    kinds = {
        "lossy.webp": (_encoded(rgb, "WEBP", quality=80), True),
        "lossless.webp": (_encoded(rgb, "WEBP", lossless=True), False),
        "alpha.webp": (_encoded(_rgba(2), "WEBP", lossless=True, exact=True), False),
        "alpha_lossy.webp": (_encoded(_rgba(3), "WEBP", quality=70), True),
        "animated.webp": (_animated_webp(), False),
        "rgb.bmp": (_encoded(rgb, "BMP"), False),
        "gray.bmp": (_encoded(gray, "BMP"), False),
        "palette.bmp": (_encoded(palette, "BMP"), False),
        "bilevel.bmp": (_encoded(bilevel, "BMP"), False),
        "rgb.ppm": (_encoded(rgb, "PPM"), False),
        "gray.pgm": (_encoded(gray, "PPM"), False),
        "maxval.ppm": (b"P6 40 30 1000\n" + (_photo(4).astype(">u2") * 3).tobytes(), False),
        "ascii.pgm": (b"P2\n# plain\n40 30\n7\n" + " ".join(str(v % 8) for v in range(H * W)).encode(), False),
        "bitmap.ppm": (_encoded(bilevel, "PPM"), False),  # P4
        "raw.tif": (_encoded(rgb, "TIFF"), False),
        "lzw.tif": (_encoded(rgb, "TIFF", compression="tiff_lzw"), False),
        "deflate.tiff": (_encoded(rgb, "TIFF", compression="tiff_adobe_deflate"), False),
        "packbits.tif": (_encoded(rgb, "TIFF", compression="packbits"), False),
        "jpeg.tif": (_encoded(rgb, "TIFF", compression="jpeg", quality=90), False),
        "rgba.tif": (_encoded(_rgba(5), "TIFF", compression="tiff_lzw"), False),
        "gray.tif": (_encoded(gray, "TIFF"), False),
        "palette.tif": (_encoded(palette, "TIFF", compression="tiff_lzw"), False),
        "bilevel.tif": (_encoded(bilevel, "TIFF", compression="group4"), False),
        "photo.jpg": (_encoded(rgb, "JPEG", quality=90), False),
        "photo.png": (_encoded(_rgba(6), "PNG"), False),
        # PNGs of each colour type and depth, alpha and transparency dropped as convert("RGB") drops them;
        # 16-bit grey opens as mode I, which convert("RGB") clips at 255, the others keep the high byte.
        "gray16.png": (_png16(_sixteen_bit(7, 1)), False),
        "gray_alpha16.png": (_png16(_sixteen_bit(8, 2)), False),
        "rgb16.png": (_png16(_sixteen_bit(9, 3)), False),
        "rgba16.png": (_png16(_sixteen_bit(10, 4)), False),
        "gray_alpha.png": (_encoded(_rgba(11).convert("LA"), "PNG"), False),
        "gray_trns.png": (_encoded(gray, "PNG", transparency=90), False),
        "palette_trns.png": (_encoded(palette, "PNG", transparency=3), False),
        "bilevel.png": (_encoded(bilevel, "PNG"), False),
        # 16-bit grey in the other formats: mode I (I;16), clipped at 255 too
        "gray16.pgm": (b"P5 40 30 65535\n" + _sixteen_bit(12, 1).astype(">u2").tobytes(), False),
        "gray1000.pgm": (b"P5 40 30 1000\n" + (_sixteen_bit(13, 1) % 1001).astype(">u2").tobytes(), False),
        "ascii1000.pgm": (b"P2 40 30 1000\n" + " ".join(str(v) for v in (_sixteen_bit(14, 1) % 1001).flat).encode(),
                          False),
        "gray16.tif": (_encoded(Image.fromarray(_sixteen_bit(15, 1).astype(np.uint16)), "TIFF"), False),
        "cmyk.jpg": (_encoded(rgb.convert("CMYK"), "JPEG", quality=90), False),  # Adobe's inverted CMYK
    }
    return kinds


def _write_folder(root, kinds):
    (root / "c0").mkdir(parents=True)
    for name, (data, _) in kinds.items():
        (root / "c0" / name).write_bytes(data)


def _assert_same_images(stoker_images, torch_images, names, lossy):
    differ = {}
    for name, a, b in zip(names, stoker_images, torch_images):
        difference = (a.int() - b.int()).abs().max().item()
        if difference > (0 if not lossy[name] else 4 if name.endswith(".jpg") else 1):
            differ[name] = difference
    assert differ == {}, f"differ by up to: {differ}"


def test_an_imagefolder_of_every_kind_gives_what_torchvisions_imagefolder_gives(tmp_path):
    kinds = _every_kind()
    _write_folder(tmp_path, kinds)
    folder = torchvision.datasets.ImageFolder(str(tmp_path), transform=WHOLE)
    names = [p.rsplit("/", 1)[1] for p, _ in folder.samples]
    assert len(names) == len(kinds)  # every extension is one torchvision's ImageFolder lists
    lossy = {name: kinds[name][1] for name in names}
    expected = [folder[i][0] for i in range(len(folder))]
    loader = stoker.DataLoader(folder, batch_size=len(folder), shuffle=False, max_bad=0)
    (x, _), = list(loader)
    assert loader.stats()["bad_samples"] == []
    _assert_same_images(x, expected, names, lossy)
    # Given by its path: the same pixels, gray too (PIL's "L" of the RGB).
    loader = stoker.DataLoader(str(tmp_path), batch_size=len(folder), transforms=WHOLE, shuffle=False, max_bad=0)
    (x, _), = list(loader)
    _assert_same_images(x, expected, names, lossy)
    gray = stoker.DataLoader(str(tmp_path), batch_size=len(folder), transforms=T.Compose([T.CenterCrop((H, W)), T.Grayscale(), T.PILToTensor()]),
                             shuffle=False, max_bad=0)
    (g, _), = list(gray)
    expected_gray = [T.PILToTensor()(Image.open(p).convert("RGB").convert("L")) for p, _ in folder.samples]
    # (A JPEG's gray is its Y channel, within a few levels of the L of its RGB: decode.h.)
    _assert_same_images(g, expected_gray, names, {**lossy, "photo.jpg": True})


def test_torchs_dataloader_side_by_side_with_the_same_transforms(tmp_path):
    kinds = {k: v for k, v in _every_kind().items() if not v[1]}  # lossless: exact equality
    _write_folder(tmp_path, kinds)
    chain = T.Compose([T.CenterCrop((24, 32)), T.PILToTensor()])
    folder = torchvision.datasets.ImageFolder(str(tmp_path), transform=chain)
    ours = [(x.clone(), y) for x, y in stoker.DataLoader(folder, batch_size=8, max_bad=0)]
    theirs = list(torch.utils.data.DataLoader(folder, batch_size=8))
    assert len(ours) == len(theirs)
    for (xa, ya), (xb, yb) in zip(ours, theirs):
        assert torch.equal(xa, xb)
        assert torch.equal(ya, yb)


def test_a_file_whose_extension_lies_is_read_by_what_it_holds(tmp_path):
    # Scraped sets (img2dataset output, web crawls) hold WebP, BMP and TIFF files named .jpg;
    # PIL reads them by their content, and so does stoker.
    kinds = _every_kind()
    (tmp_path / "c0").mkdir()
    renamed = ["lossless.webp", "rgb.bmp", "lzw.tif", "rgb.ppm", "photo.png"]
    for name in renamed:
        (tmp_path / "c0" / (name.split(".")[0] + "_" + name.split(".")[1] + ".jpg")).write_bytes(kinds[name][0])
    folder = torchvision.datasets.ImageFolder(str(tmp_path), transform=WHOLE)
    loader = stoker.DataLoader(str(tmp_path), batch_size=len(renamed), transforms=WHOLE, shuffle=False, max_bad=0)
    (x, _), = list(loader)
    assert torch.equal(x, torch.stack([folder[i][0] for i in range(len(folder))]))


@pytest.mark.parametrize("name", ["lossy.webp", "rgb.bmp", "lzw.tif", "rgb.ppm"])
def test_a_damaged_file_is_a_bad_sample_named_with_its_reason(tmp_path, name):
    kinds = _every_kind()
    (tmp_path / "c0").mkdir()
    (tmp_path / "c0" / "a_good.png").write_bytes(kinds["photo.png"][0])
    data = kinds[name][0]
    (tmp_path / "c0" / ("b_cut." + name.split(".")[1])).write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(Exception):  # PIL refuses it too
        Image.open(tmp_path / "c0" / ("b_cut." + name.split(".")[1])).convert("RGB")
    loader = stoker.DataLoader(str(tmp_path), batch_size=2, transforms=WHOLE, shuffle=False, max_bad=0.5)
    list(loader)
    (bad,) = loader.stats()["bad_samples"]
    assert bad["path"] == str(tmp_path / "c0" / ("b_cut." + name.split(".")[1]))
    assert "truncated" in bad["reason"] or "corrupt" in bad["reason"], bad


def test_image_open_of_each_kind_is_decoded_by_stoker_as_pil_would(tmp_path):
    # A Dataset returning Image.open(path) unloaded: stoker decodes the file's bytes itself.
    kinds = {k: v for k, v in _every_kind().items() if not v[1]}
    _write_folder(tmp_path, kinds)
    paths = sorted((tmp_path / "c0").iterdir())

    class Opened(torch.utils.data.Dataset):
        def __len__(self):
            return len(paths)

        def __getitem__(self, i):
            return Image.open(paths[i]), 0

    # Of modes L, P, RGB and RGBA: a chain that converts them to RGB (open_clip's) takes them all.
    chain = T.Compose([_convert_to_rgb, *WHOLE.transforms])
    loader = stoker.DataLoader(Opened(), batch_size=len(paths), transforms=chain, shuffle=False, max_bad=0)
    (x, _), = list(loader)
    expected = torch.stack([WHOLE(Image.open(p).convert("RGB")) for p in paths])
    assert torch.equal(x, expected)


@pytest.mark.parametrize("raster", [b"10 20 30 40 50\n", b"10 20 30 40 5"])
def test_a_plain_pnm_cut_short_is_a_bad_sample(tmp_path, raster):
    # Pillow refuses a plain raster that ends early, except that Pillow 9.4, where the file ends
    # inside a number, repeats that number to the end (data.md says why stoker does not).
    (tmp_path / "c0").mkdir()
    (tmp_path / "c0" / "a_good.png").write_bytes(_encoded(Image.fromarray(_photo(1)), "PNG"))
    cut = tmp_path / "c0" / "b_cut.pgm"
    cut.write_bytes(b"P2 40 30 255\n" + raster)
    if raster.endswith(b"\n"):
        with pytest.raises(ValueError):
            Image.open(cut).load()
    loader = stoker.DataLoader(str(tmp_path), batch_size=2, transforms=WHOLE, shuffle=False, max_bad=0.5)
    list(loader)
    (bad,) = loader.stats()["bad_samples"]
    assert bad["path"] == str(cut) and "truncated PNM (ASCII raster" in bad["reason"], bad


def _gif_blocks(data, pos):
    """The sub-blocks from `pos` to their terminator, and where they end."""
    start = pos
    while data[pos]:
        pos += 1 + data[pos]
    return data[start:pos + 1], pos + 1


def _gif_lzw(indices, interlace):
    """Pillow's LZW data (code size and sub-blocks) for an image of palette indices."""
    image = Image.fromarray(indices.astype(np.uint8), "P")
    image.putpalette(list(range(256)) * 3)
    data = _encoded(image, "GIF", interlace=interlace, optimize=False)
    pos = 13 + (3 << ((data[10] & 7) + 1) if data[10] & 0x80 else 0)
    while data[pos] == 0x21:  # extensions
        pos = _gif_blocks(data, pos + 2)[1]
    assert data[pos] == 0x2C and bool(data[pos + 9] & 0x40) == interlace and not data[pos + 9] & 0x80
    return data[pos + 10:pos + 11] + _gif_blocks(data, pos + 11)[0]


def _gif(screen, at, indices, palette=None, local=None, transparent=None, interlace=False):
    """A GIF whose first frame is `indices` at `at` (left, top) on a `screen` (width, height)."""
    def table(colors):
        bits = max(1, (len(colors) - 1).bit_length())
        return bits - 1, bytes(np.asarray(colors, np.uint8).ravel()) + bytes(3 * ((1 << bits) - len(colors)))

    out = b"GIF89a" + np.array(screen, "<u2").tobytes()
    out += bytes([0x80 | table(palette)[0] if palette else 0, 0, 0]) + (table(palette)[1] if palette else b"")
    if transparent is not None:
        out += bytes([0x21, 0xF9, 4, 1, 0, 0, transparent, 0])
    out += b"\x2C" + np.array([*at, indices.shape[1], indices.shape[0]], "<u2").tobytes()
    out += bytes([(0x80 | table(local)[0] if local else 0) | (0x40 if interlace else 0)])
    out += (table(local)[1] if local else b"") + _gif_lzw(indices, interlace) + b"\x3B"
    return out


def _gif_kinds():
    """name -> GIF bytes, each a 20 x 16 image as Pillow opens it."""
    rng = np.random.default_rng(7)
    full, small = rng.integers(0, 8, (16, 20)), rng.integers(0, 8, (12, 14))
    colors = [(i * 30, 255 - i * 20, (i * 77) % 256) for i in range(8)]
    return {
        "global.gif": _gif((20, 16), (0, 0), full, colors),
        "local.gif": _gif((20, 16), (0, 0), full, colors[::-1], local=colors),
        "interlaced.gif": _gif((20, 16), (0, 0), full, colors, interlace=True),
        "transparent.gif": _gif((20, 16), (0, 0), full, colors, transparent=3),
        "offset.gif": _gif((20, 16), (4, 2), small, colors),  # index 0 around the frame
        "offset_transparent.gif": _gif((20, 16), (4, 2), small, colors, transparent=6),
        "past_screen.gif": _gif((14, 8), (6, 4), small, colors),  # the canvas grows to the frame
        "short_palette.gif": _gif((20, 16), (0, 0), full, colors[:2]),  # past the palette: grey
        "no_palette.gif": _gif((20, 16), (0, 0), full),
        "animated.gif": _encoded(Image.fromarray(_photo(8)[:16, :20]).quantize(50), "GIF", save_all=True,
                                 append_images=[Image.fromarray(_photo(9)[:16, :20]).quantize(60)], duration=40),
    }


def test_a_gif_named_jpg_or_opened_by_pil_gives_pils_first_frame(tmp_path):
    # Scraped sets hold GIFs named .jpg, which ImageFolder reads through PIL: the first frame,
    # Image.open(f).convert("RGB"). Folder scans keep to IMG_EXTENSIONS, which has no .gif.
    kinds = _gif_kinds()
    (tmp_path / "c0").mkdir()
    for name, data in kinds.items():
        (tmp_path / "c0" / (name[:-4] + ".jpg")).write_bytes(data)
        (tmp_path / "c0" / name).write_bytes(data)
    whole = T.Compose([T.CenterCrop((16, 20)), T.PILToTensor()])
    folder = torchvision.datasets.ImageFolder(str(tmp_path), transform=whole)
    assert len(folder) == len(kinds)
    loader = stoker.DataLoader(str(tmp_path), batch_size=len(kinds), transforms=whole, shuffle=False, max_bad=0)
    (x, _), = list(loader)
    for k, (path, _) in enumerate(folder.samples):
        assert torch.equal(x[k], folder[k][0]), path
    paths = sorted((tmp_path / "c0").glob("*.gif"))

    class Opened(torch.utils.data.Dataset):
        def __len__(self):
            return len(paths)

        def __getitem__(self, i):
            return Image.open(paths[i]), 0

    # Opened by PIL a GIF is a palette image: PILToTensor gives its indices, and so does stoker.
    opened = stoker.DataLoader(Opened(), batch_size=len(paths), transforms=whole, shuffle=False, max_bad=0)
    (x, _), = list(opened)
    assert torch.equal(x, torch.stack([whole(Image.open(p)) for p in paths]))


def test_a_webdataset_gif_member_is_its_first_frame(tmp_path):
    import tarfile

    kinds = _gif_kinds()
    with tarfile.open(tmp_path / "shard.tar", "w") as tar:
        for k, name in enumerate(sorted(kinds)):
            for ext, data in (("gif", kinds[name]), ("cls", b"%d" % (k % 2))):
                info = tarfile.TarInfo(f"{k:04d}.{ext}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    loader = stoker.DataLoader(str(tmp_path / "shard.tar"), batch_size=len(kinds), transforms="CenterCrop((16, 20)), ToUint8",
                               shuffle=False, max_bad=0)
    (x, y), = list(loader)
    expected = [T.PILToTensor()(Image.open(io.BytesIO(kinds[name])).convert("RGB")) for name in sorted(kinds)]
    assert torch.equal(x, torch.stack(expected)) and y.tolist() == [k % 2 for k in range(len(kinds))]


@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_a_damaged_gif_is_a_bad_sample_named_with_its_reason(tmp_path, keep):
    (tmp_path / "c0").mkdir()
    (tmp_path / "c0" / "a_good.png").write_bytes(_encoded(Image.fromarray(_photo(1)[:16, :20]), "PNG"))
    data = _gif_kinds()["interlaced.gif"]
    cut = tmp_path / "c0" / "b_cut.jpg"
    cut.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(OSError):  # PIL refuses it too
        Image.open(cut).convert("RGB")
    whole = T.Compose([T.CenterCrop((16, 20)), T.PILToTensor()])
    loader = stoker.DataLoader(str(tmp_path), batch_size=2, transforms=whole, shuffle=False, max_bad=0.5)
    list(loader)
    (bad,) = loader.stats()["bad_samples"]
    assert bad["path"] == str(cut) and "GIF" in bad["reason"], bad


@pytest.mark.parametrize("given", ["paths", "Image.open"])
def test_the_largest_image_is_the_one_pil_opens(tmp_path, monkeypatch, given):
    # Image.open raises DecompressionBombError above twice Image.MAX_IMAGE_PIXELS, only warns
    # between once and twice, and opens any size once a script sets it to None (common where
    # images are scraped from the web); stoker's bound follows it, read as the loader is made.
    sizes = {"between.png": (45, 40), "over.png": (60, 40)}  # 1,800 and 2,400 pixels
    for name, size in sizes.items():
        Image.fromarray(np.zeros(size[::-1] + (3,), np.uint8)).save(tmp_path / name)

    class Files(torch.utils.data.Dataset):
        def __init__(self, names):
            self.names = names

        def __len__(self):
            return len(self.names)

        def __getitem__(self, i):
            path = str(tmp_path / self.names[i])
            return (path if given == "paths" else Image.open(path)), i

    def load(name):
        loader = stoker.DataLoader(Files([name]), batch_size=1, transforms=T.Compose([T.Resize((8, 8)), T.ToTensor()]),
                                   on_error="raise")
        return next(iter(loader))[0].shape

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    with pytest.warns(Image.DecompressionBombWarning):
        Image.open(tmp_path / "between.png")
    assert load("between.png") == (1, 3, 8, 8)
    with pytest.raises(Image.DecompressionBombError):
        Image.open(tmp_path / "over.png")
    if given == "paths":  # Image.open raises in __getitem__ for stoker's loader as for torch's
        with pytest.raises(stoker.DataError, match=r"image too large: 60x40 = 2400 pixels, over 2000, twice PIL's "
                                                   r"Image.MAX_IMAGE_PIXELS, .*; for larger images raise "
                                                   r"Image.MAX_IMAGE_PIXELS, or set it to None, before making the loader"):
            load("over.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)
    assert load("over.png") == (1, 3, 8, 8)
