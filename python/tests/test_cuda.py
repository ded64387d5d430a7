"""device="cuda": the batches the CPU path gives, copied ahead on a side stream from pinned
buffers that are refilled only after their copies completed. Skipped without a CUDA device."""
import pytest
import torch

import stoker

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CHAIN = "RandomResizedCrop(32), RandomHorizontalFlip(), Normalize"


def test_cuda_batches_are_the_cpu_batches_normalised_on_the_gpu(jpeg_folder):
    cpu = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=4, transforms=CHAIN)
    gpu = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=4, transforms=CHAIN, device="cuda")
    for (x, y), (xg, yg) in zip(cpu, gpu):
        assert xg.is_cuda and yg.is_cuda and xg.dtype == torch.float32
        assert torch.equal(y, yg.cpu())
        # The GPU path rounds to uint8 before normalising: a grey level in Normalize's units.
        assert (x - xg.cpu()).abs().max().item() <= 1 / 255 / 0.224 + 1e-5


def test_pinned_buffers_are_not_refilled_under_a_pending_copy(jpeg_folder):
    # Few buffers and many batches: every buffer is reused many times while copies run.
    cpu = [x.clone() for x, _ in stoker.DataLoader(jpeg_folder, batch_size=2, seed=1, num_workers=2,
                                                   prefetch_factor=1, transforms=CHAIN)]
    gpu = stoker.DataLoader(jpeg_folder, batch_size=2, seed=1, num_workers=2, prefetch_factor=1,
                            transforms=CHAIN, device="cuda", channels_last=True)
    got = []
    for x, _ in gpu:
        torch.cuda._sleep(1_000_000)  # a slow step keeps the copies of later batches pending
        got.append(x.clone())
    torch.cuda.synchronize()
    assert len(got) == len(cpu)
    for a, b in zip(cpu, got):
        assert (a - b.cpu()).abs().max().item() <= 1 / 255 / 0.224 + 1e-5


def test_a_chain_set_between_passes_runs_on_the_cuda_feed_with_its_normalize(jpeg_folder):
    # The feed normalises on the GPU with the chain's mean and std: the loader made again brings its own.
    gpu = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=4, transforms=CHAIN, device="cuda")
    for _ in gpu:
        pass
    changed = "RandomResizedCrop(48), Normalize(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3))"
    gpu.transforms = changed
    cpu = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=4, transforms=changed)
    cpu.set_epoch(1)
    pairs = list(zip(cpu, gpu))
    assert len(pairs) == len(cpu)
    for (x, y), (xg, yg) in pairs:
        assert xg.is_cuda and xg.shape == x.shape and x.shape[-2:] == (48, 48)
        assert torch.equal(y, yg.cpu())
        assert (x - xg.cpu()).abs().max().item() <= 1 / 255 / 0.2 + 1e-5


def test_a_datasets_own_arrays_come_to_the_device_as_torch_batches_them():
    class Pixels(torch.utils.data.Dataset):
        def __len__(self):
            return 10

        def __getitem__(self, i):
            return torch.full((3, 8, 8), i, dtype=torch.uint8), i

    theirs = list(torch.utils.data.DataLoader(Pixels(), batch_size=4))
    ours = list(stoker.DataLoader(Pixels(), batch_size=4, device="cuda"))
    assert len(ours) == len(theirs)
    for (x, y), (tx, ty) in zip(ours, theirs):
        assert x.is_cuda and x.dtype == torch.uint8 and torch.equal(x.cpu(), tx) and torch.equal(y.cpu(), ty)


def test_what_collate_fn_makes_of_a_datasets_own_items_is_pinned_and_comes_to_the_device():
    # Hugging Face's contrastive image-text example's collate_fn (test_passthrough.py), and
    # batch_size=None's items: torch's DataLoader pins what its collate_fn returns.
    from test_passthrough import Batches, Pairs, hf_collate_fn

    for dataset, options in ((Pairs(), dict(batch_size=4, collate_fn=hf_collate_fn)),
                             (Batches(), dict(batch_size=None))):
        theirs = list(torch.utils.data.DataLoader(dataset, **options))
        pinned = list(stoker.DataLoader(dataset, pin_memory=True, **options))
        on_device = list(stoker.DataLoader(dataset, device="cuda", **options))
        assert len(pinned) == len(on_device) == len(theirs)
        for a, b, expected in zip(pinned, on_device, theirs):
            pairs = list(a.items()) if isinstance(a, dict) else list(enumerate(a))
            for k, value in pairs:
                if isinstance(value, torch.Tensor):
                    assert value.is_pinned() and b[k].is_cuda and torch.equal(b[k].cpu(), expected[k])


def test_what_collate_fn_makes_of_whole_samples_is_pinned(jpeg_folder):
    # torchvision's references' mixup: collate_fn=lambda batch: mixupcutmix(*default_collate(batch)),
    # which fails on the targets alone and then gets the whole (image, target) samples.
    def mix(images, targets):
        return (images + images.flip(0)) / 2, targets

    loader = stoker.DataLoader(jpeg_folder, batch_size=4, transforms=CHAIN, pin_memory=True,
                               collate_fn=lambda batch: mix(*torch.utils.data.default_collate(batch)))
    for images, targets in loader:
        assert images.is_pinned() and targets.is_pinned()
