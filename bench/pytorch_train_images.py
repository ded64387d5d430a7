#!/usr/bin/python3
"""PyTorch conv-net training baseline for bench/compare_convnet.sh.

Trains a torchvision model on an image-folder tree (root/<class>/<file>.jpg) on
the CPU or a GPU and reports steady-state training throughput (samples/s), with
the first --warmup-steps steps left out of the timing.

    /usr/bin/python3 bench/pytorch_train_images.py --data DIR [--model efficientnet_b0]
        [--batch-size 32] [--workers 2] [--threads N] [--max-steps 60]
        [--warmup-steps 10] [--size 64] [--seed 0] [--device cpu|cuda]
        [--amp off|bf16|fp16] [--loader torch|stoker|synthetic] [--json]

On --device cuda it is set up as a tuned PyTorch script is, as `stoker train`
is on CUDA: pin_memory=True, batches copied with non_blocking=True,
channels_last model and inputs, cudnn.benchmark and TF32 on; --amp bf16/fp16
runs the forward pass under torch.autocast, fp16 with torch.amp.GradScaler.

Model: torchvision.models.<model>(num_classes=K), K = the number of class
folders (resnet18, resnet50, efficientnet_b0 .. efficientnet_b7), random
initialisation, train mode. AdamW(lr 1e-3, weight_decay 0.01), the defaults
of `stoker train`; CrossEntropyLoss; zero_grad(set_to_none=True).

Data: torchvision.datasets.ImageFolder with RandomResizedCrop(size),
RandomHorizontalFlip(), ToTensor(), Normalize(ImageNet mean/std) (PIL decode,
bilinear antialiased resize), through DataLoader(batch_size, shuffle=True
with a seeded generator, drop_last=False, num_workers=--workers,
pin_memory=True on CUDA, persistent_workers=True, prefetch_factor=4). The main
process runs torch.set_num_threads(--threads). Epochs are cycled until
--max-steps steps in all have run (as `stoker train --max-steps` counts them).

Timing (time.perf_counter()): a step is drawing the batch from the DataLoader
(wait), forward, loss, backward, optimiser step and loss.item() (compute).
The clock starts when step --warmup-steps has finished and stops when the last
step has: "samples_per_sec" = samples of steps warmup+1 .. max-steps / that
interval. Per epoch the JSON also has the steps, samples, mean loss and the
wait and compute seconds of its steps, for lining up with stoker's per-epoch
records.

--loader picks what feeds the same model and loop:
- torch (default): the DataLoader above;
- stoker: stoker.DataLoader (the Python package, which must be importable) with the same
  chain as a string, --workers threads, device=--device and channels_last on CUDA: batches
  arrive on the GPU, uint8 copied on a side stream and normalised there; --decode gpu or auto
  has nvJPEG decode the JPEGs on the GPU;
- synthetic: one random batch made on the device once and given every step, as many steps per
  epoch as the folder gives: the model's own pace with no input pipeline (the ceiling the
  other two are measured against).

With --json, progress lines go to stderr and one JSON object to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

MODELS = ("resnet18", "resnet50") + tuple(f"efficientnet_b{i}" for i in range(8))


def make_loader(args, dataset, device, memory_format):
    """What --loader names, each giving (inputs, targets) batches of the same folder."""
    import torch
    from torch.utils.data import DataLoader

    if args.loader == "stoker":
        import stoker
        return stoker.DataLoader(args.data, batch_size=args.batch_size, shuffle=True, seed=args.seed,
                                 num_workers=args.workers, transforms=f"RandomResizedCrop({args.size}), "
                                 "RandomHorizontalFlip(), Normalize", device=device.type,
                                 channels_last=memory_format == torch.channels_last, decode=args.decode)
    if args.loader == "synthetic":
        gen = torch.Generator(device=device)
        gen.manual_seed(args.seed)
        x = torch.randn(args.batch_size, 3, args.size, args.size, device=device, generator=gen)
        y = torch.randint(0, len(dataset.classes), (args.batch_size,), device=device, generator=gen)
        return [(x.contiguous(memory_format=memory_format), y)] * (len(dataset) // args.batch_size)
    gen = torch.Generator()
    gen.manual_seed(args.seed)
    extra = {"persistent_workers": True, "prefetch_factor": 4} if args.workers > 0 else {}
    return DataLoader(dataset, batch_size=args.batch_size, shuffle=True, generator=gen, drop_last=False,
                      num_workers=args.workers, pin_memory=device.type == "cuda", **extra)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="image-folder root: DIR/<class>/<file>.jpg")
    ap.add_argument("--model", default="efficientnet_b0", choices=MODELS)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2, help="DataLoader num_workers (default 2)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="torch.set_num_threads (default: os.cpu_count())")
    ap.add_argument("--max-steps", type=int, default=60, help="training steps in all, warm-up included")
    ap.add_argument("--warmup-steps", type=int, default=10, help="first steps, left out of the timing")
    ap.add_argument("--size", type=int, default=64, help="RandomResizedCrop size (default 64)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--amp", default="off", choices=("off", "bf16", "fp16"))
    ap.add_argument("--loader", default="torch", choices=("torch", "stoker", "synthetic"),
                    help="what feeds the loop (default torch; see the top of this file)")
    ap.add_argument("--decode", default="cpu", choices=("cpu", "gpu", "auto"),
                    help="--loader stoker: where JPEGs are decoded (default cpu)")
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    args = ap.parse_args()
    for name in ("batch_size", "threads", "max_steps", "size"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.workers < 0 or args.warmup_steps < 0:
        ap.error("--workers and --warmup-steps must be >= 0")
    if args.warmup_steps >= args.max_steps:
        ap.error("--warmup-steps must be below --max-steps (no step would be timed)")
    if not os.path.isdir(args.data):
        print(f"pytorch_train_images: --data '{args.data}' is not a directory", file=sys.stderr)
        return 1

    import torch
    import torchvision
    from torch import nn

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from pytorch_loader import IMAGENET_MEAN, IMAGENET_STD, imagenet_style_folder  # noqa: E402 (same folder)
    from pytorch_train_mnist import blas_summary  # noqa: E402 (same folder)

    log = sys.stderr if args.json else sys.stdout

    def say(msg: str) -> None:
        print(msg, file=log, flush=True)

    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"pytorch_train_images: --device cuda, but torch {torch.__version__} sees no CUDA device",
              file=sys.stderr)
        return 1
    if args.amp == "fp16" and args.device != "cuda":
        print("pytorch_train_images: --amp fp16 needs --device cuda (use --amp bf16 on the CPU)", file=sys.stderr)
        return 1
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    memory_format = torch.channels_last if cuda else torch.contiguous_format
    if cuda:
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    amp_dtype = {"off": None, "bf16": torch.bfloat16, "fp16": torch.float16}[args.amp]
    scaler = None
    if args.amp == "fp16":  # torch.amp.GradScaler from 2.3 on, torch.cuda.amp's before
        scaler = torch.amp.GradScaler("cuda") if hasattr(torch.amp, "GradScaler") else torch.cuda.amp.GradScaler()

    dataset = imagenet_style_folder(args.data, args.size)
    if len(dataset) == 0:
        print(f"pytorch_train_images: no images under '{args.data}'", file=sys.stderr)
        return 1
    classes = len(dataset.classes)
    loader = make_loader(args, dataset, device, memory_format)

    model = getattr(torchvision.models, args.model)(num_classes=classes)
    model = model.to(device, memory_format=memory_format)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss()
    blas, blas_libs = blas_summary(torch)
    params = sum(p.numel() for p in model.parameters())
    say(f"torch {torch.__version__}, torchvision {torchvision.__version__}, threads {torch.get_num_threads()}, "
        f"workers {args.workers}, {args.model} ({params:,} parameters, {classes} classes), "
        f"{len(dataset)} images, batch {args.batch_size}, size {args.size}, BLAS {blas}, device {device}"
        f", loader {args.loader}"
        + (f" ({torch.cuda.get_device_name(device)})" if cuda else "") + f", amp {args.amp}")

    epochs = []
    step = 0
    timed_samples = 0
    t_start = None
    t_end = None
    last_loss = None
    run_start = time.perf_counter()
    epoch = 0
    while step < args.max_steps:
        epoch += 1
        rec = {"epoch": epoch, "first_step": step + 1, "steps": 0, "samples": 0, "loss_sum": 0.0,
               "wait_s": 0.0, "compute_s": 0.0}
        t_prev = time.perf_counter()
        for xb, yb in loader:  # iterator creation and the first batch's wait count as wait
            t_got = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            if cuda:
                xb = xb.to(device, non_blocking=True, memory_format=memory_format)
                yb = yb.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
                loss = loss_fn(model(xb), yb)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            last_loss = loss.item()
            t_done = time.perf_counter()
            step += 1
            n = int(yb.shape[0])
            rec["steps"] += 1
            rec["samples"] += n
            rec["loss_sum"] += last_loss
            rec["wait_s"] += t_got - t_prev
            rec["compute_s"] += t_done - t_got
            if step == args.warmup_steps:
                t_start = t_done
            elif step > args.warmup_steps:
                timed_samples += n
                if t_start is None:  # --warmup-steps 0: the clock starts before the first batch
                    t_start = run_start
            if step >= args.max_steps:
                t_end = t_done
                break
            t_prev = time.perf_counter()
        if rec["steps"] == 0:
            print("pytorch_train_images: the DataLoader gave no batch", file=sys.stderr)
            return 1
        rec["train_loss"] = rec.pop("loss_sum") / rec["steps"]
        rec["last_step"] = step
        for k in ("wait_s", "compute_s", "train_loss"):
            rec[k] = round(rec[k], 6)
        epochs.append(rec)
        say(f"epoch {epoch}: steps {rec['first_step']}..{step}, {rec['samples']} samples, "
            f"wait {rec['wait_s']:.2f} s, compute {rec['compute_s']:.2f} s, train loss {rec['train_loss']:.4f}")

    timed_s = t_end - t_start
    sps = timed_samples / timed_s if timed_s > 0 else 0.0
    steps_per_epoch = (len(dataset) + args.batch_size - 1) // args.batch_size
    say(f"steady state: {sps:.1f} samples/s over steps {args.warmup_steps + 1}..{args.max_steps} "
        f"({timed_samples} samples in {timed_s:.2f} s); last loss {last_loss:.4f}")
    if args.json:
        print(json.dumps({
            "framework": "pytorch",
            "loader": args.loader,
            "decode": args.decode if args.loader == "stoker" else None,
            "model": args.model,
            "parameters": params,
            "classes": classes,
            "dataset_images": len(dataset),
            "steps_per_epoch": steps_per_epoch,
            "batch_size": args.batch_size,
            "size": args.size,
            "workers": args.workers,
            "threads": torch.get_num_threads(),
            "max_steps": args.max_steps,
            "warmup_steps": args.warmup_steps,
            "steps": step,
            "timed_steps": step - args.warmup_steps,
            "timed_samples": timed_samples,
            "timed_seconds": round(timed_s, 4),
            "samples_per_sec": round(sps, 3),
            "total_seconds": round(t_end - run_start, 4),
            "final_loss": round(last_loss, 6),
            "final_epoch_loss": epochs[-1]["train_loss"],
            "epochs": epochs,
            "transforms": f"RandomResizedCrop({args.size}), RandomHorizontalFlip(), ToTensor(), "
                          f"Normalize({IMAGENET_MEAN}, {IMAGENET_STD})",
            "seed": args.seed,
            "device": str(device),
            "device_name": torch.cuda.get_device_name(device) if cuda else platform.processor(),
            "amp": args.amp,
            "torch_version": torch.__version__,
            "torchvision_version": torchvision.__version__,
            "pil_version": __import__("PIL").__version__,
            "python_version": platform.python_version(),
            "blas": blas,
            "blas_libs": blas_libs,
        }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
