"""The results of a completed warp rendezvous, per family of intrinsic: lane -> result
(``_RESULTS``, which ``state.BlockState`` applies when the last lane arrives), and the
``shfl`` modes they read.
"""

import numpy as np

#: ``shfl`` modes, numbered as in PTX ``shfl.sync`` and Numba's ``shfl_sync_intrinsic``.
SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_BFLY = 0, 1, 2, 3
_SHFL_MODE_NAMES = {
    SHFL_IDX: "shfl.sync.idx",
    SHFL_UP: "shfl.sync.up",
    SHFL_DOWN: "shfl.sync.down",
    SHFL_BFLY: "shfl.sync.bfly",
}


# --------------------------------------------------------------------------------------
# Results of a completed rendezvous, per family: lane -> result


def _shfl_source_lane(lane, mode, b, c):
    """The lane that PTX ``shfl.sync`` reads for `lane`, or `lane` itself when out of range."""
    bval = int(b) & 31
    c = int(c)
    clamp = c & 31
    segmask = (c >> 8) & 31
    max_lane = (lane & segmask) | (clamp & ~segmask)
    min_lane = lane & segmask
    if mode == SHFL_UP:
        j = lane - bval
        in_range = j >= max_lane
    elif mode == SHFL_DOWN:
        j = lane + bval
        in_range = j <= max_lane
    elif mode == SHFL_BFLY:
        j = lane ^ bval
        in_range = j <= max_lane
    else:
        j = min_lane | (bval & ~segmask)
        in_range = j <= max_lane
    return j if in_range else lane


def _shfl_results(rdv):
    payloads = rdv.payloads
    results = {}
    for lane, (value, mode, b, c) in payloads.items():
        source = _shfl_source_lane(lane, mode, b, c)
        results[lane] = payloads[source][0] if source in payloads else value
    return results


def _vote_results(rdv):
    ballot = 0
    for lane, (_, predicate) in rdv.payloads.items():
        if predicate:
            ballot |= 1 << lane
    participants = rdv.arrived
    uniform = ballot == 0 or ballot == participants
    by_op = {
        "ballot": ballot,
        "all": ballot == participants,
        "any": ballot != 0,
        "eq": uniform,
    }
    return {lane: by_op[op] for lane, (op, _) in rdv.payloads.items()}


def _match_keys(values):
    """Keys under which values match, like the bit patterns compared on a GPU.

    Compiled Numba unifies the operand's type across lanes, so if any lane holds a float
    all real numbers compare as float64 bit patterns (0.0 and -0.0 differ, NaNs with
    the same bits match); otherwise integers and bools compare by value.
    """
    if any(isinstance(v, (float, np.floating)) for v in values):
        return [
            np.float64(v).tobytes() if isinstance(v, (int, float, np.integer, np.floating)) else v
            for v in values
        ]
    return [int(v) if isinstance(v, (int, np.integer, np.bool_)) else v for v in values]


def _match_results(rdv):
    lanes = list(rdv.payloads)
    keys = dict(zip(lanes, _match_keys([rdv.payloads[lane][1] for lane in lanes])))
    same = {}
    for lane in lanes:
        bits = 0
        for other in lanes:
            if keys[other] == keys[lane]:
                bits |= 1 << other
        same[lane] = bits
    all_same = all(bits == rdv.arrived for bits in same.values())
    results = {}
    for lane, (op, _) in rdv.payloads.items():
        if op == "any":
            results[lane] = same[lane]
        else:
            results[lane] = (rdv.arrived, True) if all_same else (0, False)
    return results


def _syncwarp_results(rdv):
    return dict.fromkeys(rdv.payloads)


_RESULTS = {
    "shfl": _shfl_results,
    "vote": _vote_results,
    "match": _match_results,
    "syncwarp": _syncwarp_results,
}
