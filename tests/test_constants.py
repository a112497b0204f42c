"""coop._core.constants: copies of device functions with constants bound and the
branches they decide removed compute what the originals compute."""

import dis
import inspect

import pytest

from coop._core import constants, specialize

LIMIT = 3  # a module-level number: a constant, as Numba freezes globals


def make_variant(is_items, threads, cache):
    def variant(x, y):
        if is_items and threads > 32:
            z = 1
        elif not is_items:
            z = 2
        else:
            z = 3
        if cache is not None:
            z += 10
        if threads <= LIMIT:
            z -= 100
        return z + x * y

    return variant


@pytest.mark.parametrize("is_items, threads, cache", [(True, 64, None), (True, 16, 1), (False, 2, None)])
def test_without_dead_branches_computes_the_same(is_items, threads, cache):
    variant = make_variant(is_items, threads, cache)
    copy = constants.without_dead_branches(variant)
    assert copy is not variant
    assert copy(3, 4) == variant(3, 4)
    assert copy.__qualname__ == variant.__qualname__
    assert copy.__code__.co_firstlineno == variant.__code__.co_firstlineno


def raking(x, threads, cache, lane):
    segment = (threads + 31) >> 5
    aggregate_slot = threads + 32
    if threads <= 32:
        return -1
    rakers = (threads + segment - 1) // segment
    if cache is not None:
        x += 1
    for i in range(1, segment):
        x += lane * segment + i
    return x + aggregate_slot + rakers


def test_bound_parameters_leave_the_signature_and_fold():
    copy = constants._copy(raking, {"threads": 128, "cache": None})
    assert copy.__code__.co_varnames[: copy.__code__.co_argcount] == ("x", "lane")
    assert copy(1, 2) == raking(1, 128, None, 2)
    assert copy(5, 0) == raking(5, 128, None, 0)
    # the constants were computed: no arithmetic on them is left in the copy
    assert 4 in copy.__code__.co_consts and 160 in copy.__code__.co_consts
    small = constants._copy(raking, {"threads": 16, "cache": 0})
    assert small(1, 2) == raking(1, 16, 0, 2) == -1


def test_binding_what_the_body_assigns_is_refused():
    def assigns(x, n):
        n = n + 1
        return x + n

    with pytest.raises(ValueError, match="assigned in its body"):
        constants._copy(assigns, {"n": 1})
    with pytest.raises(ValueError, match="no parameters"):
        constants._copy(raking, {"width": 1})


def test_names_of_nested_scopes_and_locals_are_left_alone():
    def shadows(x, LIMIT):  # noqa: N803  (a parameter named as the module's constant)
        return [LIMIT for LIMIT in range(2)], LIMIT + x

    assert constants.without_dead_branches(shadows)(1, 10) == ([0, 1], 11)


def test_functions_without_source_are_returned_as_they_are():
    namespace = {}
    exec("def made(x, flag=True):\n    if flag:\n        return x\n    return -x\n", namespace)
    made = namespace["made"]
    assert constants.without_dead_branches(made) is made


def test_binding_without_source_passes_the_constants():
    namespace = {}
    exec("def made(x, flag, y):\n    if flag:\n        return x + y\n    return x - y\n", namespace)
    made = namespace["made"]
    bound = constants._forwarding(made, {"flag": False})
    assert bound(5, 2) == made(5, False, 2) == 3


def public(items, output, op=None, threads=None, algorithm="direct", temp_storage=None):
    """A primitive's public signature."""


def make_body(offset):
    def impl(items, op, temp_storage):
        return items + offset if op is None else op(items, temp_storage)

    return impl


def test_a_body_takes_the_public_signature_with_its_own_code():
    signature = inspect.signature(public)
    body = make_body(5)
    implementation = constants.with_parameters(body, signature)
    assert inspect.signature(implementation) == signature
    # the body's statements themselves (no call of the body: one function for Numba)
    def instructions(function):
        return [(i.opname, i.argval) for i in dis.get_instructions(function)]

    assert instructions(implementation) == instructions(body)
    assert body.__code__.co_name == implementation.__code__.co_name
    assert implementation(1, None) == 6
    assert implementation(1, None, op=lambda a, b: a * b, temp_storage=3) == 3
    # closures of one generator share the copy's code, each with its own values
    other = constants.with_parameters(make_body(7), signature)
    assert other.__code__ is implementation.__code__ and other(1, None) == 8
    # a copy of a copy (a pruned body, say) keeps its source
    pruned = constants.without_dead_branches(make_variant(True, 64, None))
    assert constants.with_parameters(pruned, inspect.signature(lambda x, y, z=1: 0))(3, 4) == pruned(3, 4)


def test_a_body_reading_a_public_name_from_outside_is_refused():
    threads = 128

    def impl(items, temp_storage):
        return items + threads  # (the generator's constant, but also a public parameter's name)

    with pytest.raises(ValueError, match=r"reads \['threads'\] from outside"):
        constants.with_parameters(impl, inspect.signature(public))


def test_a_body_without_source_gets_a_wrapper_from_the_decorator():
    namespace = {}
    exec("def impl(items, op):\n    return items + 1\n", namespace)
    assert constants.with_parameters(namespace["impl"], inspect.signature(public)) is None
    implementation = specialize._implementation("coop.test", inspect.signature(public), namespace["impl"],
                                                ("items", "op"))
    assert inspect.signature(implementation) == inspect.signature(public)
    assert implementation(1, None) == 2
    # recorded: the docs tests check that coop's own examples record none
    assert "coop.test: impl" in specialize.CALLED_BODIES
    specialize.CALLED_BODIES.discard("coop.test: impl")
