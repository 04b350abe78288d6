"""The one network format and forward pass (simkit.policies.network), which ``learned`` and the
luck adjustment's value model both evaluate.

What each test catches:

* ``test_forward_equals_the_naive_twin``: a forward pass (either compiled variant, whole or
  column by column) that reads a layer's weights transposed or at the wrong offset, drops a
  bias or a ReLU, standardises wrongly or skips an input it should read, on random networks
  of 1, 2 and 3 hidden layers against ``tests/naive.py``'s one-number-at-a-time twin;
* ``test_the_packer_refuses_weights_that_do_not_chain``: a block packed from shapes that do
  not fit, which the kernels would read out of bounds;
* ``test_legacy_blocks_convert_to_the_packed_block``: a legacy reader that misplaces a field
  of the old headers or a weight: the converted block must be the block the packer makes of
  the same weights, number for number, so it gives the same values;
* ``test_the_shipped_models_give_their_recorded_values``: the shipped files (old layouts,
  converted at load) giving other values than before the format changed: the luck network's
  values, recorded with the old kernel, bit for bit (compiled without fast math, its floats do
  not depend on the CPU); ``learned``'s against the twin (its fast-math variant may fuse
  multiply-adds where the CPU has them).
"""

from __future__ import annotations

import numpy as np
import pytest

from simkit.errors import SimkitError
from simkit.policies.learned import H_NET, N_FEATURES
from simkit.policies.model import BUILTIN_MODEL, learned_block, load_model, model_block
from simkit.policies.network import (
    HEAD_SCRATCH,
    LEGACY_LEARNED_MAGIC,
    LEGACY_VALUE_MAGIC,
    MAX_WIDTH,
    NET_SCRATCH,
    NetworkError,
    first_layer,
    first_layer_fast,
    head,
    head_fast,
    legacy_learned_parts,
    legacy_value_parts,
    network_forward,
    network_forward_fast,
    network_offsets,
    network_widths,
    pack_network,
    shift,
    zero_network,
)
from simkit.runner.luck import N_VALUE_FEATURES, VB_NET, value_block, value_block_of
from simkit.runner.value_model import BUILTIN_VALUE_MODEL, load_value_model
from tests.naive import naive_network_value


def _random_network(rng: np.random.Generator, n: int, widths: tuple[int, ...], standardised: bool) -> np.ndarray:
    sizes = (n, *widths)
    weights = [rng.normal(0, 0.6, (sizes[i], sizes[i + 1])) for i in range(len(widths))] + [rng.normal(size=widths[-1])]
    biases = [rng.normal(0, 0.3, w) for w in widths] + [float(rng.normal())]
    if standardised:
        return pack_network(weights, biases, rng.normal(size=n), rng.uniform(0.5, 2.0, n))
    return pack_network(weights, biases)


@pytest.mark.parametrize("widths", [(7,), (9, 5), (6, 4, 3)], ids=["1-layer", "2-layers", "3-layers"])
@pytest.mark.parametrize("standardised", [True, False], ids=["standardised", "raw"])
def test_forward_equals_the_naive_twin(widths, standardised):
    rng = np.random.default_rng(len(widths) * 10 + standardised)
    n = 23
    checked = 0
    for _ in range(6):
        net = _random_network(rng, n, widths, standardised)
        assert network_widths(net) == widths
        scratch = np.zeros(NET_SCRATCH)
        for _ in range(15):
            x = np.where(rng.random(n) < 0.4, 0.0, rng.integers(-3, 6, n)).astype(np.float64)
            expected = naive_network_value(net, x)
            for forward in (network_forward, network_forward_fast):
                assert forward(net, x, scratch) == pytest.approx(expected, rel=1e-12, abs=1e-12)
            ints = x.astype(np.int64)  # learned's features are integers
            assert network_forward_fast(net, ints, scratch) == pytest.approx(expected, rel=1e-12, abs=1e-12)
            # column by column: the first layer of x, then one input changed at a time
            h, above = np.zeros(MAX_WIDTH), np.zeros(HEAD_SCRATCH)
            for layer, top in ((first_layer, head), (first_layer_fast, head_fast)):
                layer(net, x, h)
                assert top(net, h, above) == pytest.approx(expected, rel=1e-12, abs=1e-12)
            y = x.copy()
            for i in rng.choice(n, size=3, replace=False):
                y[i] = float(rng.integers(-3, 6))
                shift(net, h, int(i), x[i], y[i])
            assert head(net, h, above) == pytest.approx(naive_network_value(net, y), rel=1e-9, abs=1e-9)
            checked += 1
    assert checked == 90


def test_network_offsets_and_the_zero_network():
    rng = np.random.default_rng(4)
    net = _random_network(rng, 5, (3, 2), True)
    mean, scale, weights, output = network_offsets(net)
    assert (scale - mean, output - weights) == (5, 5 * 3 + 3 + 3 * 2 + 2) and net.size == output + 2 + 1
    assert network_offsets(_random_network(rng, 5, (3,), False))[:2] == (-1, -1)
    zero = zero_network(5)
    assert network_widths(zero) == () and network_forward(zero, np.ones(5), np.zeros(NET_SCRATCH)) == 0.0


def test_the_packer_refuses_weights_that_do_not_chain():
    good = [np.ones((4, 3)), np.ones((3, 2)), np.ones(2)]
    biases = [np.zeros(3), np.zeros(2), 0.0]
    assert network_widths(pack_network(good, biases)) == (3, 2)
    for weights, bias, words in (([np.ones((4, 3)), np.ones((2, 2)), np.ones(2)], biases, "hidden layer 2"),
                                 ([np.ones((4, 3)), np.ones((3, 2)), np.ones(3)], biases, "the output"),
                                 (good, [np.zeros(3), np.zeros(3), 0.0], "hidden layer 2"),
                                 ([np.ones((4, MAX_WIDTH + 1)), np.ones(MAX_WIDTH + 1)], [np.zeros(MAX_WIDTH + 1), 0.0],
                                  f"1..{MAX_WIDTH}"),
                                 ([np.ones(4)], [0.0], "hidden layers")):
        with pytest.raises(NetworkError, match=words) as info:
            pack_network(weights, bias)
        assert isinstance(info.value, SimkitError) and "\n" not in str(info.value)
    with pytest.raises(NetworkError, match="one number per input"):
        pack_network(good, biases, np.zeros(3), np.ones(3))


def test_legacy_blocks_convert_to_the_packed_block():
    rng = np.random.default_rng(12)
    # learned, layout version 2: magic, features, H1, H2, margin, 16 expert weights, W1, b1, W2, b2, w3, b3
    w1, b1, w2, b2, w3 = (rng.normal(size=(N_FEATURES, 6)), rng.normal(size=6), rng.normal(size=(6, 4)),
                          rng.normal(size=4), rng.normal(size=4))
    expert = rng.normal(size=16)
    old = np.concatenate([[LEGACY_LEARNED_MAGIC, N_FEATURES, 6, 4, 0.75], expert, w1.ravel(), b1, w2.ravel(), b2, w3,
                          [0.25]])
    margin, weights, net = legacy_learned_parts(old, N_FEATURES)
    converted = learned_block(net, margin, weights)
    packed = model_block(w1, b1, w2, b2, w3, 0.25, expert, 0.75, scaled=False)
    assert converted.tobytes() == packed.tobytes()
    # the luck value model's first layout: magic, features, H, exact wins, weight, mean, scale, W1, b1, w2, b2
    mean, scale = rng.normal(size=N_VALUE_FEATURES), rng.uniform(0.5, 2.0, N_VALUE_FEATURES)
    v1, c1, v2 = rng.normal(size=(N_VALUE_FEATURES, 5)), rng.normal(size=5), rng.normal(size=5)
    old = np.concatenate([[LEGACY_VALUE_MAGIC, N_VALUE_FEATURES, 5, 0.0, 0.4], mean, scale, v1.ravel(), c1, v2, [-1.5]])
    exact_wins, weight, net = legacy_value_parts(old, N_VALUE_FEATURES)
    converted = value_block_of(net, exact_wins, weight)
    assert converted.tobytes() == value_block(mean, scale, v1, c1, v2, -1.5, exact_wins=False, weight=0.4).tobytes()
    exact_wins, weight, net = legacy_value_parts(np.array([LEGACY_VALUE_MAGIC, N_VALUE_FEATURES, 0, 1.0, 1.0]),
                                                 N_VALUE_FEATURES)
    assert (exact_wins, weight, network_widths(net)) == (True, 1.0, ())
    for broken, words in ((old[:-3], "truncated"), (np.concatenate([old[:2], [300.0], old[3:]]), "wide"),
                          (np.concatenate([old[:3], [0.5], old[4:]]), "exact-wins"), (old[:3], "header"),
                          (np.concatenate([[1.0], old[1:]]), "magic number is 1,"),
                          (np.concatenate([old[:1], [60.0], old[2:]]), "takes 60 features")):
        with pytest.raises(NetworkError, match=words):
            legacy_value_parts(broken, N_VALUE_FEATURES)


def test_the_shipped_models_give_their_recorded_values():
    model = load_value_model()
    raw = np.load(BUILTIN_VALUE_MODEL)["block"]
    assert model.hidden == 64 and model.block[VB_NET:].size - raw[5:].size == 8  # the same weights, a new header
    x = np.random.default_rng(2).normal(size=(4, N_VALUE_FEATURES))
    x[:, ::3] = 0.0
    scratch = np.zeros(NET_SCRATCH)
    values = [network_forward(model.block[VB_NET:], row, scratch) for row in x]
    # recorded with the value model's own forward pass of before the one format (simkit.runner.luck.network_value)
    assert [v.hex() for v in values] == ['0x1.1ceec40aeb147p+3', '0x1.f4893b340c928p+5', '0x1.8e09b36360b16p+0',
                                         '-0x1.a0dba635ac092p+2']
    learned = load_model(BUILTIN_MODEL)
    raw = np.load(BUILTIN_MODEL)["block"]
    assert learned.hidden == (32, 16) and learned.margin == 1.6
    assert np.array_equal(learned.block[H_NET + 8 :], raw[21:]) and np.array_equal(learned.block[2:18], raw[5:21])
    probe = np.random.default_rng(1).integers(0, 9, size=(4, N_FEATURES)).astype(np.int64)
    for row in probe:
        assert network_forward_fast(learned.block[H_NET:], row, scratch) == \
            pytest.approx(naive_network_value(learned.block[H_NET:], row), rel=1e-12, abs=1e-12)
