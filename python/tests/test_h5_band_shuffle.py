"""A compressed chunked .h5 file given by path, or several given by one pattern, shuffled: by
groups of chunks within chunk_shuffle_gb (stoker/data/sampler.h; a pattern's files' chunks
together), the same order loader.sampler gives, on every rank, after set_epoch and after a resume
mid-pass; chunk_shuffle_gb=0 shuffles every row alike."""
import numpy as np
import pytest

import stoker

h5py = pytest.importorskip("h5py")

ROWS, COLS, CHUNK_ROWS = 2000, 4, 50  # 40 bands of one (50, 4) chunk
BAND_BYTES = CHUNK_ROWS * COLS * 4
GROUPED_GB = 16 * BAND_BYTES / 1e9  # groups of a few bands, and the bands the rows in flight reach
SHARDS = {"one file": [ROWS], "a pattern of three": [700, 500, 800]}  # rows per file


@pytest.fixture(params=list(SHARDS))
def h5_path(tmp_path, request):
    """The rows in one file, or in three matching feats-*.h5; row i's first value is i."""
    at = 0
    for k, rows in enumerate(SHARDS[request.param]):
        x = np.zeros((rows, COLS), np.float32)
        x[:, 0] = np.arange(at, at + rows)  # each row says which it is
        at += rows
        with h5py.File(tmp_path / f"feats-{k:05}.h5", "w") as f:
            f.create_dataset("x", data=x, chunks=(CHUNK_ROWS, COLS), compression="gzip", shuffle=True)
            f.create_dataset("y", data=np.zeros(rows, np.int64))
    return str(tmp_path / ("feats-00000.h5" if len(SHARDS[request.param]) == 1 else "feats-*.h5"))


def loader_of(path, **options):
    return stoker.DataLoader(path, transforms="none", shuffle=True, batch_size=32, num_workers=2, seed=3, **options)


def rows_of(batches):
    return [int(r) for x, _ in batches for r in x[:, 0]]


def bands_per_group(order, group):
    """The bands each stretch of `group` x CHUNK_ROWS rows of the order comes from."""
    size = group * CHUNK_ROWS
    return [len({r // CHUNK_ROWS for r in order[at:at + size]}) for at in range(0, len(order), size)]


def test_a_shuffled_pass_goes_by_groups_of_chunks_as_its_sampler_says(h5_path):
    loader = loader_of(h5_path, chunk_shuffle_gb=GROUPED_GB)
    planned = list(loader.sampler)
    first = rows_of(loader)
    assert planned == first
    assert sorted(first) == list(range(ROWS))
    # The first 400 rows come from the bands of a group or two (a third of 16 bands at most in
    # each), not from nearly all 40 as in a full shuffle.
    assert len({r // CHUNK_ROWS for r in first[:8 * CHUNK_ROWS]}) <= 16
    group = loader._loader.band_groups.group_bands
    assert loader._loader.band_groups.bands == ROWS // CHUNK_ROWS and group > 1
    full, last = divmod(ROWS // CHUNK_ROWS, group)
    assert bands_per_group(first, group) == [group] * full + ([last] if last else [])
    assert first[:CHUNK_ROWS] != sorted(first[:CHUNK_ROWS])  # shuffled within the group
    loader.set_epoch(1)
    planned = list(loader.sampler)
    second = rows_of(loader)
    assert second == planned
    assert second != first and sorted(second) == list(range(ROWS))

    alike = rows_of(loader_of(h5_path, chunk_shuffle_gb=0))
    assert sorted(alike) == list(range(ROWS))
    assert max(bands_per_group(alike, group)) > 2 * group  # every row shuffled alike: each stretch from many bands


def test_ranks_take_shards_of_one_grouped_order(h5_path):
    whole = rows_of(loader_of(h5_path, chunk_shuffle_gb=GROUPED_GB))
    shards = [rows_of(loader_of(h5_path, chunk_shuffle_gb=GROUPED_GB, rank=r, world_size=2)) for r in (0, 1)]
    assert shards == [whole[0::2], whole[1::2]]


def test_a_pass_resumed_mid_way_gets_the_rest_of_its_grouped_order(h5_path):
    loader = loader_of(h5_path, chunk_shuffle_gb=GROUPED_GB)
    loader.set_epoch(2)
    batches = iter(loader)
    head = []
    for _ in range(10):
        head += rows_of([next(batches)])
    state = loader.state_dict()
    rest = rows_of(batches)
    resumed = loader_of(h5_path, chunk_shuffle_gb=GROUPED_GB)
    resumed.load_state_dict(state)
    assert rows_of(resumed) == rest
    assert sorted(head + rest) == list(range(ROWS))


def test_a_negative_bound_is_refused_in_one_line(h5_path):
    with pytest.raises(ValueError) as raised:
        loader_of(h5_path, chunk_shuffle_gb=-1)
    assert str(raised.value).startswith("chunk_shuffle_gb=-1: ")
