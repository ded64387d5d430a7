"""The GPU decoding checks only a machine with an NVIDIA GPU can run (docs/TESTING.md's pending
list): stoker.DataLoader(device="cuda", decode="gpu") against decode="cpu" on the same files.

  python bench/gpu_decode_checks.py --data DIR [--iterations 200] [--epochs 20] [--workers N]
                                    [--floor IMAGES_PER_S] [--checks kinds,pixels,rate,memory]

- what decodes: the nvJPEG found and the decoder ("hardware engine (7 engines) + CUDA path");
- kinds: one JPEG of each kind the decoder plans for (every chroma subsampling, gray, CMYK,
  progressive, odd and large sizes, and one cut short with an end-of-image marker appended),
  each alone through decode="gpu" and "cpu": where it was decoded (nvJPEG, given back to the CPU
  by nvJPEG, or left to the CPU by the plan) and how far its pixels are from the CPU's;
- pixels: --iterations batches with decode="gpu" and with decode="cpu" (same seed, ToUint8,
  no Normalize, so the batches are the decoders' pixels resampled alike), each pair compared:
  mean and max absolute difference, and the batches whose mean is over the stage's tolerance
  (the ordering check: nvJPEG's hardware batched path was reported on H100 to write into memory
  a stream still used; the feed decodes a batch ahead into window arenas the host saw free, and
  resamples it when it hands it out: 0 such batches expected). Each epoch's first GPU batch is
  also checked by the loader itself;
- rate: decode-only images/s (batches drawn and synchronised, no model) with decode cpu, gpu
  and auto, the CPU cores busy meanwhile and per 1,000 images/s (the process's CPU time: the
  workers are its threads), the share of samples the workers left to the GPU and nvJPEG gave
  back, for auto the share of the engine's JPEGs its tuner settled at, and with --floor each
  rate against the CPU's full-size decode floor (bench/decode_floor.cpp at the same threads);
- memory: the device memory in use (cudaMemGetInfo, which sees nvJPEG's own allocations, after
  torch's cache is emptied) after each of --epochs epochs with decode="gpu": it should stay
  flat, but for the window arenas, which grow when a batch needs more (reported apart).

One JSON object per check on stdout; progress on stderr. Exit 1 when a check fails.
"""
import argparse
import json
import pathlib
import sys
import tempfile
import time

import numpy as np
import torch
from PIL import Image

import stoker
from stoker import _gpu_decode, _stoker


def say(text):
    print(text, file=sys.stderr, flush=True)


def emit(**record):
    print(json.dumps(record), flush=True)


def loader(args, decode, transforms, seed=0):
    return stoker.DataLoader(args.data, batch_size=args.batch_size, num_workers=args.workers, shuffle=True,
                             seed=seed, transforms=transforms, device="cuda", decode=decode)


def kind_files(root):
    """{name: folder} of one JPEG per kind, each in its own ImageFolder under `root` as class a's
    only image, beside a PNG in class b (decoded on the CPU: a substitute for a damaged JPEG)."""
    rng = np.random.default_rng(0)

    def photo(height, width, channels=3):
        y, x = np.mgrid[0:height, 0:width]
        base = np.stack([(x * 3) % 256, (y * 2) % 256, (x + y) % 256, (x * y) % 256][:channels], axis=-1)
        return np.clip(base + rng.integers(-12, 13, size=base.shape), 0, 255).astype(np.uint8)

    encode = _stoker.encode_jpeg
    whole = encode(photo(375, 500))
    kinds = {f"{s} 500x375": encode(photo(375, 500), subsampling=s)
             for s in ("4:2:0", "4:2:2", "4:4:4", "4:4:0", "4:1:1", "4:1:0")}
    kinds.update({
        "4:2:0 odd 333x251": encode(photo(251, 333)),
        "4:2:0 large 4032x3024": encode(photo(3024, 4032)),
        "gray 500x375": encode(photo(375, 500)[..., 0]),
        "cmyk 500x375": encode(photo(375, 500, 4)),
        "progressive 4:2:0 500x375": encode(photo(375, 500), progressive=True),
        "cut short, end-of-image appended": whole[:len(whole) // 2] + b"\xff\xd9",
    })
    paths = {}
    for i, (name, data) in enumerate(kinds.items()):
        folder = pathlib.Path(root) / f"kind{i:02d}" / "a"
        folder.mkdir(parents=True)
        (folder / "image.jpg").write_bytes(data)
        (folder.parent / "b").mkdir()
        Image.fromarray(photo(48, 64)).save(folder.parent / "b" / "plain.png")
        paths[name] = folder.parent
    return paths


def check_kinds(args):
    """Each kind alone through decode='gpu' and 'cpu': where it went, and its pixels' distance."""
    chain = f"RandomResizedCrop({args.size}, scale=(0.25, 1.0)), ToUint8"
    worst_ok = True
    with tempfile.TemporaryDirectory() as root:
        for name, folder in kind_files(root).items():
            record = dict(check="kind", kind=name)
            try:
                gpu, cpu = (stoker.DataLoader(str(folder), batch_size=2, num_workers=1, seed=3, transforms=chain,
                                              device="cuda", decode=decode, on_error="substitute", max_bad=0.9)
                            for decode in ("gpu", "cpu"))
                (x, _), = list(gpu)
                (y, _), = list(cpu)
                stage = gpu._gpu_stage
                d = (x[0].int() - y[0].int()).abs().float()  # the JPEG's slot (class a comes first)
                record.update(where="nvjpeg" if stage.decoded else "given back by nvjpeg" if stage.fallbacks
                              else "left to the CPU by the plan", mean=round(d.mean().item(), 3), max=d.max().item(),
                              bad=[b["reason"] for b in gpu.stats()["bad_samples"]])
                worst_ok &= d.mean().item() <= _gpu_decode.TOLERANCE
            except Exception as e:  # noqa: BLE001 - each kind's failure is a finding, not the end of the check
                record.update(error=f"{type(e).__name__}: {e}")
                worst_ok = False
            emit(**record)
    return worst_ok


def check_pixels(args):
    chain = f"RandomResizedCrop({args.size}), RandomHorizontalFlip(), ToUint8"
    gpu, cpu = loader(args, "gpu", chain), loader(args, "cpu", chain)
    emit(check="decoder", decode=gpu.decode, description=gpu._gpu_stage.decoder.description if gpu._gpu_stage else None)
    if gpu.decode != "gpu":
        return False
    means, worst, over, done = [], 0.0, 0, 0
    while done < args.iterations:  # each pass over the loaders is their next epoch
        for (x, _), (y, _) in zip(gpu, cpu):
            d = (x.int() - y.int()).abs()
            mean = d.float().mean().item()
            means.append(mean)
            worst = max(worst, d.max().item())
            over += mean > _gpu_decode.TOLERANCE
            done += 1
            if done >= args.iterations:
                break
    stage = gpu._gpu_stage
    emit(check="pixels", batches=done, mean_of_means=sum(means) / len(means), largest_mean=max(means), max=worst,
         batches_over_tolerance=over, tolerance=_gpu_decode.TOLERANCE, decoded_on_gpu=stage.decoded,
         made_on_cpu_after_nvjpeg=stage.fallbacks)
    return over == 0


def rate(args, decode):
    chain = f"RandomResizedCrop({args.size}), RandomHorizontalFlip(), Normalize"
    data = loader(args, decode, chain)
    images, started, cpu_started = 0, None, None
    for i, (x, _) in enumerate(data):
        if i == args.warmup:
            torch.cuda.synchronize()
            started, cpu_started, images = time.perf_counter(), time.process_time(), 0
        images += x.shape[0]
        if i >= args.warmup + args.rate_batches:
            break
    torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    # The workers are threads of this process: its CPU time is theirs and the consumer's.
    cores = (time.process_time() - cpu_started) / seconds
    stage = data._gpu_stage
    vs_floor = round(images / seconds / args.floor, 2) if args.floor else None
    emit(check="rate", decode=decode, used=data.decode, images_per_s=images / seconds, workers=args.workers,
         floor_images_per_s=args.floor, times_the_floor=vs_floor,
         cores_busy=round(cores, 2), cores_per_1000_images_per_s=round(cores / (images / seconds / 1000), 2),
         decoded_on_gpu=stage.decoded if stage else 0, made_on_cpu_after_nvjpeg=stage.fallbacks if stage else 0,
         gpu_share=data.stats()["decode"].get("gpu_share"))


def memory(args):
    chain = f"RandomResizedCrop({args.size}), RandomHorizontalFlip(), Normalize"
    data = loader(args, "gpu", chain)
    used, arenas = [], []
    for epoch in range(args.epochs):
        for i, (x, _) in enumerate(data):
            if i >= args.memory_batches:
                break
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        free, total = torch.cuda.mem_get_info()
        used.append((total - free) / 2**20)
        arenas.append(data._gpu_stage.arena_bytes() / 2**20 if data._gpu_stage else 0.0)
        say(f"epoch {epoch}: {used[-1]:.0f} MiB in use, {arenas[-1]:.0f} MiB of it window arenas")
    growth = used[-1] - used[1] if len(used) > 1 else 0.0
    arena_growth = arenas[-1] - arenas[1] if len(arenas) > 1 else 0.0
    emit(check="memory", epochs=args.epochs, mib_in_use=[round(u) for u in used],
         arena_mib=[round(a) for a in arenas], growth_after_epoch_1_mib=growth,
         arena_growth_after_epoch_1_mib=arena_growth)
    return growth - arena_growth < 64


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="an ImageFolder of JPEGs")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--iterations", type=int, default=200, help="batch pairs compared (default 200)")
    ap.add_argument("--warmup", type=int, default=10, help="batches left out of the rate")
    ap.add_argument("--rate-batches", type=int, default=60, help="batches timed per decode")
    ap.add_argument("--epochs", type=int, default=20, help="epochs of the memory check")
    ap.add_argument("--memory-batches", type=int, default=20, help="batches per epoch of the memory check")
    ap.add_argument("--floor", type=float, help="the CPU's full-size decode floor at --workers threads, images/s")
    ap.add_argument("--checks", default="kinds,pixels,rate,memory")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        say("gpu_decode_checks: no CUDA device")
        return 1
    ok = True
    checks = args.checks.split(",")
    if "kinds" in checks:
        ok &= check_kinds(args)
    if "pixels" in checks:
        ok &= check_pixels(args)
    if "rate" in checks:
        for decode in ("cpu", "gpu", "auto"):
            rate(args, decode)
    if "memory" in checks:
        ok &= memory(args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
