"""A coop.device call stopped part-way (KeyboardInterrupt, an error in a simulated kernel)
leaves coop's kept temporaries usable: the same call made again gives the results it
gives on fresh state. Each algorithm is stopped at several blocks of its kernels (the
simulator runs a launch block by block): before its second block, half-way, and at its
last block, when counters that completed kernels set back to zero (tile claims, last
blocks' arrivals) are mid-way."""

import pytest

import coop
from numba.cuda.simulator.kernel import BlockManager

from helpers import ON_GPU, assert_equal_exact
from test_device_temp_storage import CALLS, COUNTED, _empty_reduce_args

pytestmark = pytest.mark.skipif(ON_GPU, reason="stops simulated kernels between blocks")

N = 700
SORT_N = 200  # (a sort's passes or rounds are many blocks already; the simulator takes a second a call)
SORTS = ("radix_sort", "merge_sort")
# (one radix sort; an empty reduction is one block: nothing to stop part-way)
ONE_SORT = [call for call in CALLS if (call[0] != "radix_sort" or call[1].__name__ == "_sort_bits_args")
            and call[1] is not _empty_reduce_args]


class _BlockCounter:
    """``BlockManager.run`` counting the blocks run, raising KeyboardInterrupt at block
    ``stop_at`` (counted from 0 over the whole call)."""

    def __init__(self, run, stop_at=None):
        self.run, self.stop_at, self.blocks = run, stop_at, 0

    def __call__(self, manager, *args):
        if self.blocks == self.stop_at:
            raise KeyboardInterrupt(f"stopped at block {self.blocks}")
        self.blocks += 1
        return self.run(manager, *args)


def _call(monkeypatch, name, make, stop_at=None):
    counter = _BlockCounter(BlockManager.run, stop_at)
    args, outputs = make(SORT_N if name in SORTS else N)
    with monkeypatch.context() as patch:
        patch.setattr(BlockManager, "run", lambda manager, *a: counter(manager, *a))
        returned = getattr(coop.device, name)(*args)
    return returned, [out.copy_to_host() for out in outputs], counter.blocks


@pytest.mark.parametrize("name,make", ONE_SORT, ids=[f"{name}-{make.__name__.strip('_')}" for name, make in ONE_SORT])
def test_a_call_stopped_part_way_leaves_kept_state_usable(monkeypatch, name, make):
    _call(monkeypatch, name, make)  # (coop's temporaries made: later calls launch the same blocks)
    expected_return, expected, blocks = _call(monkeypatch, name, make)
    assert blocks >= 2, f"{name}: {blocks} blocks, none to stop part-way"
    for stop_at in sorted({1, blocks // 2, blocks - 1}):
        with pytest.raises(KeyboardInterrupt):
            _call(monkeypatch, name, make, stop_at)
        got_return, got, _ = _call(monkeypatch, name, make)
        assert got_return == expected_return, f"{name} after a call stopped at block {stop_at}"
        written = slice(got_return) if name in COUNTED else slice(None)  # (past the count: unset)
        for out, want in zip(got, expected):
            assert_equal_exact(out[written], want[written], f"{name} after a call stopped at block {stop_at}")
