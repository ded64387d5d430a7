"""A chain changed between passes takes effect at the next pass, as with torch's DataLoader, whose
worker processes copy the Dataset at each pass's start: an ImageFolder's `transform` replaced or
its objects changed (progressive resizing, augmentation turned off for the last epochs), its
`target_transform` replaced, `transforms=` objects changed, `loader.transforms` set. The loader
made again keeps the seed and epoch: its batches are a new loader's with that chain."""
import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms as T

import stoker
from conftest import assert_same_batches, batches


def resized_crop(size, flip=0.5):
    return T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(flip), T.ToTensor()])


def folder(root, transform, **kwargs):
    return torchvision.datasets.ImageFolder(str(root), transform=transform, **kwargs)


def shapes(loader):
    return {tuple(x.shape[1:]) for x, _ in loader}


def test_an_imagefolders_transform_replaced_between_epochs_runs_from_the_next(png_folder):
    data = folder(png_folder, resized_crop(32))
    loader = stoker.DataLoader(data, batch_size=6, shuffle=True, seed=3, num_workers=2)
    assert shapes(loader) == {(3, 32, 32)}
    data.transform = resized_crop(48)  # the next stage of a progressive resize
    got = batches(loader)
    assert {tuple(x.shape[1:]) for x, _ in got} == {(3, 48, 48)}
    # The loader made again runs epoch 1 on the same seed: a new loader's batches with that chain.
    fresh = stoker.DataLoader(folder(png_folder, resized_crop(48)), batch_size=6, shuffle=True, seed=3, num_workers=2)
    fresh.set_epoch(1)
    assert_same_batches(got, batches(fresh))


def test_an_imagefolders_transform_objects_changed_in_place_run_from_the_next_pass(png_folder):
    data = folder(png_folder, T.Compose([T.CenterCrop(32), T.RandomHorizontalFlip(0.0), T.ToTensor()]))
    loader = stoker.DataLoader(data, batch_size=8, num_workers=1)
    plain = batches(loader)
    data.transform.transforms[1].p = 1.0  # the flip's probability
    flipped = batches(loader)
    assert_same_batches(flipped, [(torch.flip(x, dims=[3]), y) for x, y in plain])
    data.transform.transforms[0].size = (24, 24)  # the crop's size
    assert shapes(loader) == {(3, 24, 24)}


def test_a_subsets_folder_transform_replaced_runs_from_the_next_pass(png_folder):
    data = folder(png_folder, resized_crop(32))
    loader = stoker.DataLoader(torch.utils.data.Subset(data, range(0, 24, 2)), batch_size=4)
    assert shapes(loader) == {(3, 32, 32)}
    data.transform = resized_crop(40)
    assert shapes(loader) == {(3, 40, 40)}


def test_a_target_transform_replaced_runs_from_the_next_pass(png_folder):
    data = folder(png_folder, resized_crop(16))
    loader = stoker.DataLoader(data, batch_size=24)
    (_, targets), = batches(loader)
    data.target_transform = lambda t: t + 10
    (_, moved), = batches(loader)
    assert torch.equal(moved, targets + 10)


def test_transforms_objects_changed_in_place_run_from_the_next_pass(png_folder):
    chain = resized_crop(32)
    loader = stoker.DataLoader(png_folder, batch_size=8, transforms=chain)
    assert shapes(loader) == {(3, 32, 32)}
    chain.transforms[0].size = (40, 56)
    assert shapes(loader) == {(3, 40, 56)}
    assert loader.transforms.startswith("RandomResizedCrop((40, 56)")


def test_an_unchanged_chain_keeps_the_running_loader(png_folder):
    loader = stoker.DataLoader(folder(png_folder, resized_crop(32)), batch_size=8)
    running = loader._loader
    batches(loader)
    batches(loader)
    assert loader._loader is running


def test_persistent_workers_take_the_change_too(png_folder):
    # torch's persistent worker processes keep the first pass's Dataset copy, and so the old chain.
    data = folder(png_folder, resized_crop(32))
    loader = stoker.DataLoader(data, batch_size=8, num_workers=2, persistent_workers=True)
    batches(loader)
    data.transform = resized_crop(48)
    assert shapes(loader) == {(3, 48, 48)}


def test_loader_transforms_set_between_passes_runs_from_the_next(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=8, shuffle=True, seed=1, transforms="RandomResizedCrop(32)")
    assert shapes(loader) == {(3, 32, 32)}
    loader.transforms = "RandomResizedCrop(48), RandomHorizontalFlip()"
    assert loader.transforms.startswith("RandomResizedCrop(48)")
    got = batches(loader)
    fresh = stoker.DataLoader(png_folder, batch_size=8, shuffle=True, seed=1,
                              transforms="RandomResizedCrop(48), RandomHorizontalFlip()")
    fresh.set_epoch(1)
    assert_same_batches(got, batches(fresh))
    chain = resized_crop(24)
    loader.transforms = chain  # objects, read again at each pass's start
    chain.transforms[0].size = (20, 20)
    assert shapes(loader) == {(3, 20, 20)}


def test_loader_transforms_set_during_a_pass_is_refused_in_one_line(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=8, transforms="RandomResizedCrop(32)")
    running = iter(loader)
    next(running)
    with pytest.raises(RuntimeError) as raised:
        loader.transforms = "RandomResizedCrop(48)"
    assert str(raised.value) == ("loader.transforms cannot change during a pass (batch 1 of epoch 0 came last): set "
                                 "it between passes, after the pass's last batch or before iter(); it takes effect "
                                 "at the next pass")
    assert {tuple(x.shape[1:]) for x, _ in running} == {(3, 32, 32)}  # the pass goes on with its chain
    loader.transforms = "RandomResizedCrop(48)"  # after its last batch
    assert shapes(loader) == {(3, 48, 48)}


def test_a_chain_stoker_cannot_run_set_between_passes_is_one_line_and_keeps_the_running_one(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=8, transforms="RandomResizedCrop(32)")
    with pytest.raises(ValueError) as raised:
        loader.transforms = "RandomResizedCrop(0)"
    with pytest.raises(ValueError) as at_construction:
        stoker.DataLoader(png_folder, batch_size=8, transforms="RandomResizedCrop(0)")
    assert "\n" not in str(raised.value) and str(raised.value) == str(at_construction.value)
    with pytest.raises(ValueError, match=r"^transforms: the function shout \(.*\) is not a transform stoker reads"):
        loader.transforms = [T.RandomResizedCrop(48), shout]
    assert shapes(loader) == {(3, 32, 32)}


def shout(image):
    return image


def test_an_unreadable_transform_set_on_the_dataset_is_one_line_at_iter_and_runs_in_a_new_loader(png_folder):
    data = folder(png_folder, resized_crop(32))
    loader = stoker.DataLoader(data, batch_size=8)
    batches(loader)
    data.transform = T.Compose([T.RandomResizedCrop(48), T.Lambda(lambda image: image), T.ToTensor()])
    with pytest.raises(ValueError) as at_iter:
        iter(loader)
    assert "\n" not in str(at_iter.value) and "Lambda" in str(at_iter.value)
    assert "make a new stoker.DataLoader, which calls ImageFolder's own __getitem__ in Python" in str(at_iter.value)
    with pytest.warns(UserWarning, match="Lambda"):  # a new loader runs the folder's own __getitem__
        assert shapes(stoker.DataLoader(data, batch_size=8)) == {(3, 48, 48)}
    data.transform = resized_crop(40)  # nothing was lost: fixed, the next pass runs
    assert shapes(loader) == {(3, 40, 40)}


def test_a_resume_across_a_change_gives_the_uninterrupted_runs_batches(png_folder):
    data = folder(png_folder, resized_crop(32))
    run = stoker.DataLoader(data, batch_size=4, shuffle=True, seed=7)
    batches(run)  # epoch 0 at 32 px
    data.transform = resized_crop(48)  # epoch 1 at 48 px
    passing = iter(run)
    taken = [next(passing)[0].clone() for _ in range(2)]
    state = run.state_dict()
    rest = [(x.clone(), y.clone()) for x, y in passing]
    assert {tuple(x.shape[1:]) for x in taken} == {(3, 48, 48)} and len(rest) == len(run) - 2

    # The resumed script makes its loader with the first stage's transform, then sets its epoch's.
    again = folder(png_folder, resized_crop(32))
    resumed = stoker.DataLoader(again, batch_size=4, shuffle=True)
    resumed.load_state_dict(state)
    again.transform = resized_crop(48)
    assert_same_batches(batches(resumed), rest)


def test_a_gpu_decoders_loader_refuses_a_changed_chain_in_one_line(png_folder):
    data = folder(png_folder, resized_crop(32))
    loader = stoker.DataLoader(data, batch_size=8)
    loader._gpu_stage = "made for RandomResizedCrop(32)"  # decode='gpu' on a CUDA device (test_cuda.py)
    data.transform = resized_crop(48)
    with pytest.raises(ValueError) as raised:
        iter(loader)
    message = str(raised.value)
    assert message.startswith("transforms: the chain changed between passes to 'RandomResizedCrop(48, ")
    assert message.endswith("and the GPU decoder (decode='gpu' or 'auto') was made for the chain the loader was made "
                            "with: make a new stoker.DataLoader for the new chain, or use decode='cpu'")
    assert "\n" not in message


class Squares(torch.utils.data.IterableDataset):
    def __iter__(self):
        for i in range(12):
            yield np.full((30, 30, 3), i * 20, np.uint8), i


def test_an_iterable_datasets_transforms_objects_changed_run_from_the_next_pass():
    chain = T.Compose([T.CenterCrop(16), T.ToTensor()])
    loader = stoker.DataLoader(Squares(), batch_size=4, transforms=chain)
    assert shapes(loader) == {(3, 16, 16)}
    chain.transforms[0].size = (8, 8)
    got = batches(loader)
    assert {tuple(x.shape[1:]) for x, _ in got} == {(3, 8, 8)}
    assert [int(i) for _, y in got for i in y] == list(range(12))
