"""decode='gpu' end to end without a GPU: the loader leaves its JPEGs in the batch, nvJPEG (here
tests/fake_nvjpeg, a libnvjpeg that decodes with libjpeg-turbo into host memory, built by this
test) decodes them, files it refuses or fails on are made on the CPU, and the resample writes
them into the batch: the batches equal a loader's that decodes on the CPU, to the bit. On a GPU
the same code runs with nvJPEG's own pixels (docs/TESTING.md lists that check)."""
import pathlib
import shutil
import subprocess

import numpy as np
import pytest
import torch
from PIL import Image

import stoker
from stoker import _gpu_decode, _stoker

from conftest import write_image_folder

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAIN = "RandomResizedCrop(48, scale=(0.2, 1.0)), RandomHorizontalFlip, RandomVerticalFlip(0.3), Normalize"


@pytest.fixture(scope="module")
def fake_nvjpeg(tmp_path_factory):
    """The decoding fake libnvjpeg.so.12, compiled from the repository's source."""
    compiler = shutil.which("g++")
    turbojpeg = subprocess.run(["pkg-config", "--cflags", "--libs", "libturbojpeg"], capture_output=True, text=True) \
        if shutil.which("pkg-config") else None
    if compiler is None or turbojpeg is None or turbojpeg.returncode != 0:
        pytest.skip("building the fake nvJPEG needs g++, pkg-config and libturbojpeg's development files "
                    "(scripts/install_deps.sh installs them)")
    out = tmp_path_factory.mktemp("nvjpeg") / "libnvjpeg.so.12"
    subprocess.run([compiler, "-std=c++20", "-O1", "-shared", "-fPIC", "-o", str(out),
                    str(ROOT / "tests" / "fake_nvjpeg" / "fake_nvjpeg.cpp"), *turbojpeg.stdout.split()], check=True)
    return out


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """JPEGs of several sizes, with a progressive one (nvJPEG's CUDA path) and a PNG (the CPU's)."""
    root = write_image_folder(tmp_path_factory.mktemp("gpu") / "train", classes=2, per_class=9, kind="jpg", seed=3)
    rng = np.random.default_rng(4)
    pixels = rng.integers(0, 256, size=(70, 90, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(root / "class_0" / "progressive.jpg", quality=90, progressive=True)
    Image.fromarray(pixels).save(root / "class_1" / "plain.png")
    return root


class HostStream:
    """What the stage asks of a CUDA stream, for decoding into host memory."""
    cuda_stream = 0

    def synchronize(self):
        pass


def loader(root, handoff):
    return _stoker.Loader(_stoker.Source(str(root), "train", False), batch_size=6, workers=2, prefetch=2,
                          shuffle=True, drop_last=False, seed=11, rank=0, world_size=1, transforms=CHAIN,
                          channels_last=False, normalize_in_consumer=True, on_error="substitute", max_bad=0.5,
                          cache_decoded_bytes=0, run_ahead=False, gpu_handoff=handoff, gpu_required=True)


def decoder(fake, monkeypatch, fail=None):
    monkeypatch.setenv("STOKER_NVJPEG", str(fake))
    if fail is None:
        monkeypatch.delenv("FAKE_NVJPEG_FAIL", raising=False)
    else:
        monkeypatch.setenv("FAKE_NVJPEG_FAIL", fail)
    return _stoker.GpuDecoder([])


def epoch(cpu, gpu, stage):
    """(CPU batch, GPU batch finished by `stage` in host memory, samples it left for the GPU) of
    each batch of an epoch, the loaders' buffers released as it goes."""
    cpu.start_epoch(0)
    gpu.start_epoch(0)
    while (a := cpu.next()) is not None:
        b = gpu.next()
        decoded = stage.decode(b, HostStream())
        inputs = torch.utils.dlpack.from_dlpack(b.inputs).clone()
        stage.finish(decoded, inputs, b)
        yield torch.utils.dlpack.from_dlpack(a.inputs).clone(), inputs, len(b.gpu or [])
    assert gpu.next() is None


@pytest.mark.parametrize("fail", [None, "batched", "parse:2"])
def test_gpu_decoded_batches_equal_the_cpu_decoders(photos, fake_nvjpeg, monkeypatch, fail):
    cpu, gpu = loader(photos, "off"), loader(photos, "all")
    stage = _gpu_decode.GpuDecodeStage(gpu, decoder(fake_nvjpeg, monkeypatch, fail), "cpu")
    handed = 0
    for want, got, left in epoch(cpu, gpu, stage):
        handed += left
        assert torch.equal(got, want)
    assert handed == 18 + 1  # every JPEG, the progressive one included; not the PNG
    assert gpu.stage_times()["gpu_samples"] == handed
    assert stage.decoded + stage.fallbacks == handed
    if fail == "parse:2":
        assert stage.fallbacks >= 1  # the file nvJPEG could not parse, made on the CPU
    if fail is None:
        assert stage.fallbacks == 0


def test_the_engine_only_share_leaves_progressive_files_to_the_workers(photos, fake_nvjpeg, monkeypatch):
    gpu = loader(photos, "hardware")
    gpu.start_epoch(0)
    handed = 0
    while (batch := gpu.next()) is not None:
        handed += len(batch.gpu or [])
    assert handed == 18


def test_pixels_that_differ_from_the_cpu_decoders_stop_the_run_in_one_line(photos, fake_nvjpeg, monkeypatch):
    cpu, gpu = loader(photos, "off"), loader(photos, "all")
    stage = _gpu_decode.GpuDecodeStage(gpu, decoder(fake_nvjpeg, monkeypatch), "cpu")

    def dark(windows, columns, rows, out, **kwargs):  # an engine that wrote nothing
        out.zero_()

    monkeypatch.setattr(_gpu_decode, "resample_with_taps", dark)
    with pytest.raises(_gpu_decode.GpuDecodeError) as raised:
        list(epoch(cpu, gpu, stage))
    message = str(raised.value)
    assert message.startswith("decode='gpu': nvJPEG's pixels differ from the CPU decoder's by ")
    assert message.endswith("use decode='cpu'") and "\n" not in message


def test_a_chain_the_gpu_cannot_finish_is_refused_for_gpu_and_decoded_on_the_cpu_for_auto(photos):
    source = _stoker.Source(str(photos), "train", False)
    options = dict(batch_size=4, workers=1, prefetch=2, shuffle=False, drop_last=False, seed=0, rank=0, world_size=1,
                   transforms="RandomResizedCrop(48), ColorJitter(0.4), Normalize", channels_last=False,
                   normalize_in_consumer=True, on_error="substitute", max_bad=0.5, cache_decoded_bytes=0,
                   gpu_handoff="all")
    with pytest.raises(ValueError) as raised:
        _stoker.Loader(source, gpu_required=True, **options)
    assert str(raised.value) == ("decode='gpu': the chain's ColorJitter(brightness=0.4) runs on the CPU only; "
                                 "use decode='cpu' or 'auto'")
    auto = _stoker.Loader(source, gpu_required=False, **options)
    assert auto.gpu_note == "decode='auto': decoding on the CPU: the chain's ColorJitter(brightness=0.4) runs on the CPU only"
    auto.start_epoch(0)
    assert auto.next().gpu is None


def test_nvjpeg_that_cannot_decode_here_is_one_line(fake_nvjpeg, monkeypatch):
    with pytest.raises(RuntimeError) as raised:
        decoder(fake_nvjpeg, monkeypatch, fail="all")
    assert "\n" not in str(raised.value) and "nvJPEG" in str(raised.value)



def test_stats_say_where_jpegs_were_decoded(photos):
    assert stoker.DataLoader(photos, batch_size=4).stats()["decode"] == {"decoder": "cpu"}
