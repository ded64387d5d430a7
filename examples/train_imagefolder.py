"""Trains a model of your own on an image folder (root/<class>/<image>) with stoker's loader,
monitor and step-time diagnosis, written as a PyTorch script is written: your model, your
loss, your loop, AMP and gradient accumulation.

    .venv/bin/python examples/train_imagefolder.py DATA_DIR [--model resnet18] [--epochs 2]

Two lines differ from a torchvision script: the DataLoader (stoker.DataLoader in place of
ImageFolder + torch.utils.data.DataLoader) and stoker.watch around it.
"""
import argparse
import time

import torch
import torch.nn as nn
import torchvision

import stoker


def small_cnn(classes):
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(128, classes))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="an image folder: root/<class>/<image>")
    parser.add_argument("--model", choices=["small", "resnet18", "resnet50"], default="small")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--accum-steps", type=int, default=1, help="gradient accumulation")
    parser.add_argument("--size", type=int, default=112, help="training image size")
    parser.add_argument("--amp", choices=["off", "bf16", "fp16"], default="off")
    parser.add_argument("--log", default="monitor.csv", help="the monitor's CSV log")
    parser.add_argument("--max-steps", type=int, default=0, help="stop each epoch after this many steps")
    args = parser.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    loader = stoker.DataLoader(
        args.data, batch_size=args.batch_size, shuffle=True, drop_last=True, num_workers="auto", seed=0,
        transforms=f"RandomResizedCrop({args.size}), RandomHorizontalFlip(), Normalize",
        device=device, channels_last=device == "cuda")
    classes = len(loader.class_names)
    model = small_cnn(classes) if args.model == "small" else getattr(torchvision.models, args.model)(
        num_classes=classes)
    model = model.to(device, memory_format=torch.channels_last if device == "cuda" else torch.contiguous_format)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-5)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.amp)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp == "fp16" and device == "cuda")
    print(f"{loader!r} on {device}")

    with stoker.monitor(interval=1.0, log=args.log):
        for epoch in range(args.epochs):
            model.train()
            loader.set_epoch(epoch)  # as with DistributedSampler; a pass cut short then still moves on
            started, seen, correct, loss_sum = time.perf_counter(), 0, 0, 0.0
            for step, (images, labels) in enumerate(stoker.watch(loader)):
                with torch.autocast(device_type=device, dtype=amp_dtype or torch.bfloat16, enabled=amp_dtype is not None):
                    outputs = model(images)
                    loss = criterion(outputs, labels) / args.accum_steps
                scaler.scale(loss).backward()
                if (step + 1) % args.accum_steps == 0:
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad(set_to_none=True)
                loss_sum += loss.item() * args.accum_steps * labels.shape[0]
                correct += (outputs.argmax(1) == labels).sum().item()
                seen += labels.shape[0]
                if args.max_steps and step + 1 >= args.max_steps:
                    break
            seconds = time.perf_counter() - started
            print(f"epoch {epoch}: loss {loss_sum / max(1, seen):.4f} · train accuracy {100 * correct / max(1, seen):.1f} %"
                  f" · {seen / seconds:,.0f} images/s", flush=True)


if __name__ == "__main__":
    main()
