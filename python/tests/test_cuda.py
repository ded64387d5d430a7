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
