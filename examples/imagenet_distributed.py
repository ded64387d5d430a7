"""PyTorch's ImageNet example (pytorch/examples, imagenet/main.py), cut to its training path, on
stoker.DataLoader: torchvision's ImageFolder and transforms, DistributedSampler and
set_epoch, DistributedDataParallel, and a validation loop that reads len(loader.dataset) and
len(loader.sampler) and evaluates the samples DistributedSampler leaves over.

    # one process
    .venv/bin/python examples/imagenet_distributed.py DATA -a resnet18 --epochs 2
    # two processes on one machine (gloo on the CPU, nccl on GPUs)
    torchrun --nproc_per_node 2 examples/imagenet_distributed.py DATA -a resnet18
    # Debian 12's torchrun (torch 1.13 on Python 3.11) stops at its start; start each rank instead:
    for r in 0 1; do RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
        .venv/bin/python examples/imagenet_distributed.py DATA -a resnet18 & done; wait

DATA holds train/ and val/, each root/<class>/<image>. The loaders are the only lines that
differ from torch's: `stoker.DataLoader` where the example writes `torch.utils.data.DataLoader`,
and `world_size=1` for the loader every rank reads whole.
"""
import argparse
import json
import os
import pathlib
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms
from torch.utils.data import Subset
from torch.utils.data.distributed import DistributedSampler

import stoker

_REDUCED = []  # the tensors all_reduce was given (validate)


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="a folder holding train/ and val/ image folders")
    parser.add_argument("-a", "--arch", default="resnet18", help="a torchvision model (default resnet18)")
    parser.add_argument("-j", "--workers", default=4, type=int, help="data loading workers (default 4)")
    parser.add_argument("--epochs", default=90, type=int)
    parser.add_argument("-b", "--batch-size", default=256, type=int, help="per process")
    parser.add_argument("--lr", "--learning-rate", default=0.1, type=float, dest="lr")
    parser.add_argument("--momentum", default=0.9, type=float)
    parser.add_argument("--wd", "--weight-decay", default=1e-4, type=float, dest="weight_decay")
    parser.add_argument("--image-size", default=224, type=int, help="training crop (validation: the same)")
    parser.add_argument("--seed", default=None, type=int, help="seeds torch (the loaders draw their seed from it)")
    parser.add_argument("--dist-backend", default="nccl" if torch.cuda.is_available() else "gloo")
    parser.add_argument("--record-targets", default=None, type=pathlib.Path,
                        help="write each rank's training targets per epoch to DIR/rank<R>.jsonl (to check shards)")
    return parser.parse_args()


def main():
    args = arguments()
    if args.seed is not None:
        torch.manual_seed(args.seed)
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    distributed = world_size > 1
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available() and local_rank >= torch.cuda.device_count():
        sys.exit(f"local rank {local_rank} and {torch.cuda.device_count()} GPU(s) here: start one process per GPU "
                 "(torchrun --nproc-per-node), or hide the GPUs (CUDA_VISIBLE_DEVICES=) to run ranks on the CPU")
    if distributed:
        dist.init_process_group(backend=args.dist_backend)
    rank = dist.get_rank() if distributed else 0
    device = torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(os.path.join(args.data, "train"), transforms.Compose([
        transforms.RandomResizedCrop(args.image_size),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        normalize,
    ]))
    val_dataset = datasets.ImageFolder(os.path.join(args.data, "val"), transforms.Compose([
        transforms.Resize(args.image_size * 256 // 224),
        transforms.CenterCrop(args.image_size),
        transforms.ToTensor(),
        normalize,
    ]))
    if distributed:
        train_sampler = DistributedSampler(train_dataset)
        val_sampler = DistributedSampler(val_dataset, shuffle=False, drop_last=True)
    else:
        train_sampler = val_sampler = None
    train_loader = stoker.DataLoader(train_dataset, batch_size=args.batch_size, shuffle=(train_sampler is None),
                                     num_workers=args.workers, pin_memory=True, sampler=train_sampler)
    val_loader = stoker.DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False,
                                   num_workers=args.workers, pin_memory=True, sampler=val_sampler)

    model = models.__dict__[args.arch](num_classes=len(train_dataset.classes)).to(device)
    if distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank] if device.type == "cuda" else None)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)

    for epoch in range(args.epochs):
        if distributed:
            train_sampler.set_epoch(epoch)
        started = time.perf_counter()
        targets = train(train_loader, model, criterion, optimizer, device)
        seconds = time.perf_counter() - started
        if args.record_targets is not None:
            args.record_targets.mkdir(parents=True, exist_ok=True)
            with open(args.record_targets / f"rank{rank}.jsonl", "a") as f:
                f.write(json.dumps({"epoch": epoch, "targets": targets}) + "\n")
        loss, acc1, count = validate(val_loader, model, criterion, device, distributed, world_size, args)
        scheduler.step()
        print(f"rank {rank} epoch {epoch}: train {len(targets)} images in {seconds:.1f} s · val loss {loss:.4f} "
              f"acc@1 {acc1:.3f} % over {count} images", flush=True)
    if distributed:
        dist.destroy_process_group()


def train(train_loader, model, criterion, optimizer, device):
    """One epoch; returns the targets it trained on, in order."""
    model.train()
    seen = []
    for images, target in train_loader:
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        seen += target.tolist()
    return seen


def validate(val_loader, model, criterion, device, distributed, world_size, args):
    """(mean loss, top-1 accuracy in %, images) over the whole validation set, the same on every rank."""
    model.eval()
    totals = torch.zeros(3, dtype=torch.float64, device=device)  # loss sum, correct, images

    def run_validate(loader):
        with torch.no_grad():
            for images, target in loader:
                images = images.to(device, non_blocking=True)
                target = target.to(device, non_blocking=True)
                output = model(images)
                totals[0] += criterion(output, target).item() * target.shape[0]
                totals[1] += (output.argmax(1) == target).sum().item()
                totals[2] += target.shape[0]

    run_validate(val_loader)
    if distributed:
        dist.all_reduce(totals)
        # Kept until the process exits: torch 1.13's gloo group can drop its last reference to a
        # tensor of a finished collective on its own thread while the main thread, tearing the
        # group down, holds the GIL that releasing it needs (a hang at exit, seen with torch's
        # DataLoader as with stoker's).
        _REDUCED.append(totals)
    # DistributedSampler(drop_last=True) leaves the last samples over: every rank evaluates them.
    if distributed and len(val_loader.sampler) * world_size < len(val_loader.dataset):
        aux_val_dataset = Subset(val_loader.dataset, range(len(val_loader.sampler) * world_size,
                                                           len(val_loader.dataset)))
        # world_size=1: every rank reads all of it (stoker shards a loader without a sampler by itself).
        aux_val_loader = stoker.DataLoader(aux_val_dataset, batch_size=args.batch_size, shuffle=False,
                                           num_workers=args.workers, pin_memory=True, world_size=1)
        run_validate(aux_val_loader)
    loss, correct, count = totals.tolist()
    return loss / count, 100 * correct / count, int(count)


if __name__ == "__main__":
    main()
