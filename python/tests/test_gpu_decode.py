"""decode='gpu' end to end without a GPU: the loader leaves its JPEGs in the batch, nvJPEG (here
tests/fake_nvjpeg, a libnvjpeg that decodes with libjpeg-turbo into host memory, built by this
test) decodes them, files it refuses or fails on are made on the CPU, and the resample writes
them into the batch: the batches equal a loader's that decodes on the CPU, to the bit. The
stage and the device feed run with HostCuda, stand-in streams and events that record the order
of what is enqueued and what the host waited for, so the tests also hold the ordering contract:
no stream drained, nvJPEG writes an arena only after the host saw its last reader done, a
window is read only after the host saw its decode done. On a GPU the same code runs with
nvJPEG's own pixels (docs/TESTING.md lists that check)."""
import contextlib
import io
import pathlib
import shutil
import subprocess
import time

import numpy as np
import pytest
import torch
from PIL import Image

import stoker
from stoker import _gpu_decode, _stoker, device_feed

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


class HostCuda:
    """The streams and events of the stage and the feed (stoker._cuda_calls), in host memory, on
    one side stream. Work "enqueued" runs at once, but an event reports done only once the host
    synchronized it (the conservative reading of a real one). Every write nvJPEG is given and
    every window the resample reads is logged with its place in the stream; an access that may
    overlap an earlier one still possibly running (a write after any access, a read after a
    write, of the same bytes) is a hazard: the host must first have synchronized an event
    recorded after the earlier access."""

    def __init__(self):
        self.log = []                  # what was enqueued or recorded, in order
        self.accesses = []             # (log position, "read" or "write", first byte, past the last)
        self.done_before = 0           # every log position below it is known done on the host
        self.hazards = []
        self.stream_synchronizes = 0
        self.event_synchronizes = 0
        self.side = HostStream(self)
        self.current = HostStream(self)

    def stream(self, device):
        return self.side

    def event(self):
        return HostEvent(self)

    def use(self, stream):
        return contextlib.nullcontext()

    def current_stream(self, device):
        return self.current

    def record_stream(self, tensor, stream):
        pass

    def access(self, kind, ranges):
        here = len(self.log)
        self.log.append(kind)
        for lo, hi in ranges:
            for position, earlier, a, b in self.accesses:
                if position >= self.done_before and a < hi and lo < b and "write" in (kind, earlier):
                    self.hazards.append(f"{kind} at {here} of [{lo}, {hi}) while the {earlier} at {position} "
                                        f"may still run (known done before {self.done_before})")
            self.accesses.append((here, kind, lo, hi))


class HostStream:
    cuda_stream = 0

    def __init__(self, cuda):
        self.cuda = cuda
        self.waited = []

    def synchronize(self):
        self.cuda.stream_synchronizes += 1
        self.cuda.done_before = len(self.cuda.log)

    def wait_event(self, event):
        self.waited.append(event)
        self.cuda.log.append("wait")


class HostEvent:
    def __init__(self, cuda):
        self.cuda = cuda
        self.position = None
        self.done = False

    def record(self, stream):
        assert stream is self.cuda.side
        self.position = len(self.cuda.log)
        self.cuda.log.append("record")
        self.done = False

    def synchronize(self):
        assert self.position is not None, "an event synchronized before it was recorded"
        self.cuda.event_synchronizes += 1
        self.cuda.done_before = max(self.cuda.done_before, self.position)
        self.done = True

    def query(self):
        return self.done


class WatchedDecoder:
    """A GpuDecoder whose destinations are logged as writes."""

    def __init__(self, decoder, cuda):
        self.decoder, self.cuda, self.calls = decoder, cuda, 0
        self.description = decoder.description

    def decode(self, batch, slots, pointers, pitches, stream):
        height = {slot: h for slot, _, h in batch.gpu}
        self.cuda.access("write", [(p, p + pitch * height[s]) for s, p, pitch in zip(slots, pointers, pitches)])
        self.calls += 1
        return self.decoder.decode(batch, slots, pointers, pitches, stream)


@pytest.fixture
def watched_reads(monkeypatch):
    """Logs the windows each resample reads into the HostCuda given to `watched_reads.cuda`."""

    class Watch:
        cuda = None

    real = _gpu_decode.resample_with_tables

    def resample(windows, tables, out, **kwargs):
        Watch.cuda.access("read", [(w.data_ptr(), w.data_ptr() + w.shape[0] * w.stride(0)) for w in windows])
        return real(windows, tables, out, **kwargs)

    monkeypatch.setattr(_gpu_decode, "resample_with_tables", resample)
    return Watch


def loader(root, handoff, batch_size=6):
    return _stoker.Loader(_stoker.Source(str(root), "train", False), batch_size=batch_size, workers=2, prefetch=2,
                          shuffle=True, drop_last=False, seed=11, rank=0, world_size=1, transforms=CHAIN,
                          channels_last=False, normalize_in_consumer=True, on_error="substitute", max_bad=0.5,
                          cache_decoded_bytes=0, run_ahead=False, gpu_handoff=handoff, gpu_required=True)


def decoder(fake, monkeypatch, fail=None, batch_size=6):
    monkeypatch.setenv("STOKER_NVJPEG", str(fake))
    if fail is None:
        monkeypatch.delenv("FAKE_NVJPEG_FAIL", raising=False)
    else:
        monkeypatch.setenv("FAKE_NVJPEG_FAIL", fail)
    return _stoker.GpuDecoder([], transforms=CHAIN, batch_size=batch_size)


def stage_on_host(gpu, fake, monkeypatch, watched_reads, fail=None, batch_size=6):
    """A GpuDecodeStage over `gpu` in host memory, its decoder's writes and resample's reads watched."""
    cuda = HostCuda()
    watched_reads.cuda = cuda
    return _gpu_decode.GpuDecodeStage(gpu, WatchedDecoder(decoder(fake, monkeypatch, fail, batch_size), cuda), "cpu",
                                      cuda=cuda)


def epoch(cpu, gpu, stage, number=0):
    """(CPU batch, GPU batch finished by `stage` in host memory, samples it left for the GPU) of
    each batch of an epoch, driven as the device feed drives it: batch k finished, then batch
    k+1 decoded and copied (cloned); the loaders' buffers released as it goes."""
    cpu.start_epoch(number)
    gpu.start_epoch(number)
    stream = stage.cuda.side
    ahead = None
    while True:
        if ahead is not None:
            want, pending, inputs, left = ahead
            stage.finish(pending, inputs, stream)
            yield want, inputs, left
        a, b = cpu.next(), gpu.next()
        if a is None:
            assert b is None
            return
        pending = stage.decode(b, stream)
        ahead = (torch.utils.dlpack.from_dlpack(a.inputs).clone(), pending,
                 torch.utils.dlpack.from_dlpack(b.inputs).clone(), len(b.gpu or []))


def feed(loader, stage=None):
    """A DeviceFeed in host memory over a raw loader, with the stage's HostCuda (else its own)."""
    return device_feed.DeviceFeed(loader, "cpu", False, lambda b: torch.utils.dlpack.from_dlpack(b.targets).clone(),
                                  lambda b: None, gpu=stage, cuda=stage.cuda if stage is not None else HostCuda())


def feed_epoch(f, number, stop_after=None):
    """The feed's batches of an epoch ((inputs, targets), cloned), or its first `stop_after`."""
    f.loader.start_epoch(number)
    f.start()
    out = []
    while stop_after is None or len(out) < stop_after:
        f.cuda.log.append("next")
        if (item := f.next()) is None:
            break
        out.append((item[0].clone(), item[1].clone()))
    return out


def assert_same_batches(got, want):
    assert len(got) == len(want)
    for (x, t), (y, u) in zip(got, want):
        assert torch.equal(x, y) and torch.equal(t, u)


@pytest.mark.parametrize("fail", [None, "batched", "parse:2"])
def test_gpu_decoded_batches_equal_the_cpu_decoders(photos, fake_nvjpeg, monkeypatch, watched_reads, fail):
    cpu, gpu = loader(photos, "off"), loader(photos, "all")
    stage = stage_on_host(gpu, fake_nvjpeg, monkeypatch, watched_reads, fail)
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
    assert stage.cuda.hazards == [] and stage.arenas_in_use() == 0


@pytest.mark.parametrize("fail", [None, "batched_all,decode_jpeg"])
def test_nvjpeg_writes_an_arena_only_after_its_last_reader_was_seen_done(photos, fake_nvjpeg, monkeypatch,
                                                                          watched_reads, fail):
    """And the resample reads a window only after the host saw its decode done; no stream is
    drained for either. When nvJPEG gives every file back, no batch is finished: the arena's
    own event is then the only one the host waits for."""
    cpu, gpu = loader(photos, "off"), loader(photos, "all")
    stage = stage_on_host(gpu, fake_nvjpeg, monkeypatch, watched_reads, fail)
    for number in range(3):
        for want, got, _ in epoch(cpu, gpu, stage, number):
            assert torch.equal(got, want)
    assert stage.decoder.calls == 12  # each arena written 4 times
    assert stage.decoded == (3 * 19 if fail is None else 0) and stage.decoded + stage.fallbacks == 3 * 19
    assert stage.cuda.hazards == []
    assert stage.cuda.stream_synchronizes == 0


def test_the_feed_decodes_a_batch_ahead_without_draining_a_stream(photos, fake_nvjpeg, monkeypatch, watched_reads):
    """DeviceFeed with GPU decoding over several epochs: a decode='cpu' feed's batches, to the bit;
    the host never synchronizes a stream; each batch the current stream waits for is handed out
    with its windows resampled."""
    cpu, gpu = loader(photos, "off"), loader(photos, "all")
    stage = stage_on_host(gpu, fake_nvjpeg, monkeypatch, watched_reads)
    on_cpu, on_gpu = feed(cpu), feed(gpu, stage)
    for number in range(3):
        assert_same_batches(feed_epoch(on_gpu, number), feed_epoch(on_cpu, number))
    cuda = stage.cuda
    assert stage.decoded == 3 * 19 and cuda.stream_synchronizes == 0 and cuda.hazards == []
    assert len(cuda.current.waited) == 12 and all(e.position is not None for e in cuda.current.waited)
    # Batch k+1 is decoded when batch k is handed out, and resampled when it is handed out itself.
    steps = [kind for kind in cuda.log if kind in ("next", "write", "read", "wait")]
    assert steps == (["write"] + ["next", "read", "wait", "write"] * 3 + ["next", "read", "wait", "next"]) * 3
    assert stage.arenas_in_use() == 0


def test_an_arena_grows_when_a_batch_needs_more(photos, fake_nvjpeg, monkeypatch, watched_reads):
    monkeypatch.setattr(_gpu_decode, "ARENA_HEADROOM", 1.0)  # each arena as large as the batch that made it
    cpu, gpu = loader(photos, "off"), loader(photos, "all")
    stage = stage_on_host(gpu, fake_nvjpeg, monkeypatch, watched_reads)
    on_cpu, on_gpu = feed(cpu), feed(gpu, stage)
    for number in range(3):
        assert_same_batches(feed_epoch(on_gpu, number), feed_epoch(on_cpu, number))
    assert stage.arena_growths > _gpu_decode.ARENAS  # some arena was reallocated for a larger batch
    assert stage.cuda.hazards == [] and stage.cuda.stream_synchronizes == 0


def test_a_batch_over_256_samples_is_decoded_whole(tmp_path, fake_nvjpeg, monkeypatch, watched_reads):
    # The decoder is opened for the loader's batch size (data::gpu_decoder_options), so nvJPEG
    # takes every sample of a batch of 300; one opened for 256 refused the batch.
    root = write_image_folder(tmp_path / "train", classes=2, per_class=150, kind="jpg", sides=(20, 30), seed=5)
    cpu, gpu = loader(root, "off", batch_size=300), loader(root, "all", batch_size=300)
    stage = stage_on_host(gpu, fake_nvjpeg, monkeypatch, watched_reads, batch_size=300)
    [(want, got, left)] = epoch(cpu, gpu, stage)
    assert left == 300 and stage.decoded + stage.fallbacks == 300 and stage.fallbacks == 0
    assert torch.equal(got, want)


def test_a_pass_stopped_mid_epoch_frees_the_batch_decoded_ahead(photos, fake_nvjpeg, monkeypatch, watched_reads):
    cpu, gpu = loader(photos, "off"), loader(photos, "all")
    stage = stage_on_host(gpu, fake_nvjpeg, monkeypatch, watched_reads)
    on_cpu, on_gpu = feed(cpu), feed(gpu, stage)
    for number, stop_after in ((0, 0), (0, 1), (0, None), (1, 2), (2, 0), (3, None)):
        assert_same_batches(feed_epoch(on_gpu, number, stop_after), feed_epoch(on_cpu, number, stop_after))
    assert stage.arenas_in_use() == 0
    assert stage.checks == 3  # epochs 0, 1 and 3: a batch decoded ahead and dropped leaves the check to the next
    assert stage.cuda.hazards == [] and stage.cuda.stream_synchronizes == 0


def test_the_engine_only_share_leaves_progressive_files_to_the_workers(photos, fake_nvjpeg, monkeypatch):
    gpu = loader(photos, "hardware")
    gpu.start_epoch(0)
    handed = 0
    while (batch := gpu.next()) is not None:
        handed += len(batch.gpu or [])
    assert handed == 18


class SlowEnginesCuda(HostCuda):
    """HostCuda whose events take `wait_s` to be seen done: JPEG engines slower than the step."""

    def __init__(self, wait_s):
        super().__init__()
        self.wait_s = wait_s

    def event(self):
        event = HostEvent(self)
        synchronize = event.synchronize

        def slow():
            if not event.done:
                time.sleep(self.wait_s)
            synchronize()

        event.synchronize = slow
        return event


def test_auto_lowers_the_share_when_the_engines_are_behind_and_its_batches_stay_the_cpu_decoders(
        photos, fake_nvjpeg, monkeypatch):
    """decode='auto' (gpu_handoff 'hardware'): the host waiting for the decode lowers the share of
    the engine's JPEGs left to the GPU, a step a window; the workers make the rest, and the batches
    still equal a decode='cpu' feed's, to the bit."""
    cpu, gpu = loader(photos, "off"), loader(photos, "hardware")
    cuda = SlowEnginesCuda(0.003)
    stage = _gpu_decode.GpuDecodeStage(gpu, decoder(fake_nvjpeg, monkeypatch), "cpu", cuda=cuda, tune_share=True)
    # The feed's own wait for the loader and its batch times follow the machine's load (a busy
    # machine's workers can make the loader wait longer than the engines): the tuner is given
    # none and 10 ms, so what moves the share is the stage's measured wait for the decode alone.
    measured = stage.tune_share
    monkeypatch.setattr(stage, "tune_share", lambda loader_wait_s, batch_s: measured(0.0, 0.010))
    on_cpu, on_gpu = feed(cpu), feed(gpu, stage)
    assert stage.gpu_share == 1.0
    # 4 batches an epoch, of which the first of each pass feeds nothing: 2 windows in 11 epochs.
    window = _stoker.GpuShareTuner.window
    epochs = -(-2 * window // 3)
    for number in range(epochs):
        assert_same_batches(feed_epoch(on_gpu, number), feed_epoch(on_cpu, number))
    assert stage.decode_wait_s >= 0.003
    assert stage.gpu_share == pytest.approx(1 - 2 * _stoker.GpuShareTuner.step)
    assert gpu.gpu_share == stage.gpu_share
    left = gpu.stage_times()["gpu_samples"]
    assert left < 18 * epochs and stage.decoded == left  # fewer left than every engine JPEG, all decoded
    assert stage.cuda.stream_synchronizes == 0


def test_decode_gpu_ignores_the_share_and_a_share_outside_zero_to_one_is_refused(photos, fake_nvjpeg, monkeypatch):
    gpu = loader(photos, "all")
    gpu.gpu_share = 0.0
    gpu.start_epoch(0)
    handed = 0
    while (batch := gpu.next()) is not None:
        handed += len(batch.gpu or [])
    assert handed == 19
    with pytest.raises(ValueError) as raised:
        gpu.gpu_share = 1.5
    assert str(raised.value) == ("gpu_share must be in [0, 1] (the share of the engine's JPEGs left for the GPU), "
                                 "got 1.5")
    assert _gpu_decode.GpuDecodeStage(gpu, None, "cpu", cuda=HostCuda()).gpu_share is None


def test_pixels_that_differ_from_the_cpu_decoders_stop_the_run_in_one_line(photos, fake_nvjpeg, monkeypatch,
                                                                          watched_reads):
    cpu, gpu = loader(photos, "off"), loader(photos, "all")
    stage = stage_on_host(gpu, fake_nvjpeg, monkeypatch, watched_reads)

    def dark(windows, tables, out, **kwargs):  # an engine that wrote nothing
        out.zero_()

    monkeypatch.setattr(_gpu_decode, "resample_with_tables", dark)
    with pytest.raises(_gpu_decode.GpuDecodeError) as raised:
        list(epoch(cpu, gpu, stage))
    message = str(raised.value)
    assert message.startswith("decode='gpu': nvJPEG's pixels differ from the CPU decoder's by ")
    assert message.endswith("use decode='cpu'") and "\n" not in message
    assert stage.arenas_in_use() == 0


def test_after_wrong_pixels_stop_a_pass_the_next_one_decodes(photos, fake_nvjpeg, monkeypatch, watched_reads):
    """The batch that failed the check holds no arena and leaves nothing half made in the feed."""
    cpu, gpu = loader(photos, "off"), loader(photos, "all")
    stage = stage_on_host(gpu, fake_nvjpeg, monkeypatch, watched_reads)
    on_cpu, on_gpu = feed(cpu), feed(gpu, stage)
    resample = _gpu_decode.resample_with_tables
    monkeypatch.setattr(_gpu_decode, "resample_with_tables", lambda windows, tables, out, **kwargs: out.zero_())
    with pytest.raises(_gpu_decode.GpuDecodeError):
        feed_epoch(on_gpu, 0)
    assert stage.arenas_in_use() == 0 and on_gpu.next() is None
    monkeypatch.setattr(_gpu_decode, "resample_with_tables", resample)
    for number in (1, 2):
        assert_same_batches(feed_epoch(on_gpu, number), feed_epoch(on_cpu, number))
    assert stage.arenas_in_use() == 0 and stage.cuda.hazards == []


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



def test_stats_say_where_jpegs_were_decoded(photos, fake_nvjpeg, monkeypatch):
    assert stoker.DataLoader(photos, batch_size=4).stats()["decode"] == {"decoder": "cpu"}
    # decode='auto' on a GPU adds the share of the engine's JPEGs left to it (a stage on the host here).
    data = stoker.DataLoader(photos, batch_size=4)
    data._gpu_stage = _gpu_decode.GpuDecodeStage(data._loader, decoder(fake_nvjpeg, monkeypatch), "cpu",
                                                 cuda=HostCuda(), tune_share=True)
    data._loader.gpu_share = 0.75
    decode = data.stats()["decode"]
    assert decode["gpu_share"] == 0.75 and decode["decoded_on_gpu"] == 0
    data._gpu_stage.share_tuner = None  # decode='gpu'
    assert "gpu_share" not in data.stats()["decode"]


class _OpenedDecoder:
    """What data_loader asks of a GpuDecoder once it is open."""

    def __init__(self, has_hardware):
        self.has_hardware = has_hardware
        self.description = "nvJPEG 12.99.7: CUDA path only: this GPU has no JPEG engine" if not has_hardware \
            else "nvJPEG 12.99.7: hardware engine (7 engines) + CUDA path"


@pytest.mark.parametrize("decode, has_hardware, handoff", [
    ("gpu", True, "all"), ("gpu", False, "cuda_path"), ("auto", True, "hardware"), ("auto", False, "off")])
def test_the_handoff_follows_the_decode_asked_and_the_engine(monkeypatch, capsys, decode, has_hardware, handoff):
    from stoker import data_loader
    opened = _OpenedDecoder(has_hardware)
    asked = []
    monkeypatch.setattr(_gpu_decode, "make_decoder",
                        lambda device, dirs, transforms, batch_size: asked.append((transforms, batch_size)) or opened)
    assert _stoker.gpu_handoff_for(decode, has_hardware) == handoff
    got = data_loader._gpu_decoder(decode, "cuda", CHAIN, 300)
    assert asked == [(CHAIN, 300)]  # the decoder is sized for the loader's chain and batch
    assert got == ((None, "off") if handoff == "off" else (opened, handoff))
    note = capsys.readouterr().err
    if handoff == "off":  # auto on a GPU without the engine decodes on the workers, saying why in one line
        assert note == f"decode='auto': decoding on the CPU: {opened.description}\n"
    else:
        assert note == ""


def test_encode_jpeg_writes_every_kind_the_gpu_checks_use():
    # bench/gpu_decode_checks.py's JPEGs of every kind; Pillow writes neither 4:4:0 nor 4:1:x.
    from PIL import JpegImagePlugin
    pixels = np.random.default_rng(2).integers(0, 256, size=(40, 48, 3), dtype=np.uint8)
    for subsampling, pil_code in (("4:4:4", 0), ("4:2:2", 1), ("4:2:0", 2)):
        image = Image.open(io.BytesIO(_stoker.encode_jpeg(pixels, subsampling=subsampling)))
        assert JpegImagePlugin.get_sampling(image) == pil_code
    for subsampling, factors in (("4:4:0", (1, 2)), ("4:1:1", (4, 1)), ("4:1:0", (4, 2))):
        image = Image.open(io.BytesIO(_stoker.encode_jpeg(pixels, subsampling=subsampling)))
        assert image.layer[0][1:3] == factors and image.size == (48, 40)  # luma's sampling factors
    assert Image.open(io.BytesIO(_stoker.encode_jpeg(pixels[..., 0]))).mode == "L"
    assert Image.open(io.BytesIO(_stoker.encode_jpeg(np.dstack([pixels, pixels[..., :1]])))).mode == "CMYK"
    assert Image.open(io.BytesIO(_stoker.encode_jpeg(pixels, progressive=True))).info.get("progressive")
    with pytest.raises(ValueError, match=r"^subsampling '4:2:1' is not one of 4:4:4, .*4:1:0$"):
        _stoker.encode_jpeg(pixels, subsampling="4:2:1")
    with pytest.raises(ValueError, match=r"shape \(H, W\), \(H, W, 3\) or \(H, W, 4\)"):
        _stoker.encode_jpeg(pixels[..., :2])
