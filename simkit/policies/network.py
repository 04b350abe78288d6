"""simkit's small networks: one block format, one packer and one forward pass, in numba.

Two networks are evaluated inside the kernels: the value network of the ``learned`` policy
(:mod:`simkit.policies.learned`, two hidden layers over raw features, each feature's scale
folded into the first layer) and the value network of the luck adjustment
(:mod:`simkit.runner.luck`, one hidden layer over standardised features).  Both are the same
kind of function, a ReLU multilayer perceptron with one output, stored as one ``float64``
**network block** (:func:`pack_network` writes it; the ``learned`` model block and the luck
value block each put their own small header before it):

* a header: :data:`NET_MAGIC` (:data:`NETWORK_MAGIC`), :data:`NET_INPUTS` (n),
  :data:`NET_LAYERS` (k hidden layers, 0 .. :data:`NET_MAX_LAYERS`), :data:`NET_STANDARDISED`
  (1: the inputs are standardised, z = (x - mean) / scale; 0: the network reads x itself) and
  :data:`NET_MAX_LAYERS` width slots from :data:`NET_WIDTHS` (the hidden layers' widths,
  1 .. :data:`MAX_WIDTH`; 0 past k);
* with standardisation: mean (n), then scale (n);
* per hidden layer l: W_l (n_{l-1} × w_l, row i holding input i's weights into the layer),
  then b_l (w_l);
* the output: w (w_k), then b (1).

A block of k = 0 layers is the *zero network* (its header only): its value is 0.

**Forward pass.**  ``value = b + Σ_k relu(a_k) w_k`` over the last hidden layer a, each hidden
layer ``b_l + Σ_j relu(a_j) W_l[j]`` over the layer below, the first ``b_1 + Σ_i z_i W_1[i]``
over the inputs that are not zero.  The kernels split it where the callers evaluate many
inputs that differ in a few features: :func:`first_layer` (the first layer's pre-activation),
:func:`shift` (move it as one input changes: its column only) and :func:`head` (the layers
above the first, from that pre-activation); :func:`network_forward` is all three in one.

**Two compiled variants.**  ``learned``'s first layer and head have always been compiled with
``fastmath=True`` (numba's fast-math flags, which allow LLVM to fuse a multiply and an add
into one FMA and to reorder the sums) and the luck network's without; the incremental
:func:`shift` was compiled without by both.  The two give different last bits, and each
caller's values must stay bit for bit what they were, so the pass is compiled twice from one
source: the bodies are ``inline="always"`` functions (numba inlines them into the caller's IR,
where the caller's flags apply), called by two thin cached entry points each:
:func:`first_layer` / :func:`first_layer_fast`, :func:`head` / :func:`head_fast`,
:func:`network_forward` / :func:`network_forward_fast` (``_fast``: with fast math, what
``learned`` plays).  One Python function compiled under two sets of flags would share one
entry in numba's on-disk cache, so the variants are separate functions, not a factory.

**Legacy blocks.**  The files written before this format (the shipped
``simkit/policies/models/learned.npz`` and ``simkit/runner/models/value.npz`` among them) hold
the old blocks, each with its own header; they keep their bytes (their SHA-256 digests are
recorded in datasets, reports and cached luck), so the loaders convert them at load:
:func:`legacy_learned_parts` and :func:`legacy_value_parts` (the legacy reader, the one place
that knows those layouts) return the network block and the header's other fields.  The
network weights are laid out in the old blocks exactly as here, so the conversion copies them.

>>> import numpy as np
>>> net = pack_network([np.ones((2, 3)), np.ones(3)], [np.zeros(3), 0.5])
>>> network_widths(net), network_forward(net, np.array([1.0, 2.0]), np.zeros(NET_SCRATCH))
((3,), 9.5)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numba import njit

from simkit.defaults import MAX_HIDDEN_WIDTH
from simkit.errors import SimkitError
from simkit.jit import hot_kernel

NETWORK_MAGIC = 7_310_580.0
NET_MAX_LAYERS = 4  # the most hidden layers a block may have
MAX_WIDTH = MAX_HIDDEN_WIDTH  # the widest hidden layer (declared once, in simkit.defaults)
NET_MAGIC = 0
NET_INPUTS = 1
NET_LAYERS = 2
NET_STANDARDISED = 3
NET_WIDTHS = 4  # NET_MAX_LAYERS slots
NET_HEADER = NET_WIDTHS + NET_MAX_LAYERS
NET_SCRATCH = NET_MAX_LAYERS * MAX_WIDTH  # floats of the forward pass's scratch: each hidden layer's values
HEAD_SCRATCH = NET_SCRATCH - MAX_WIDTH  # floats of :func:`head`'s scratch (the layers above the first)


class NetworkError(SimkitError):
    """Weights that do not make a network block (shapes that do not chain, too many layers)."""


def network_size(n_inputs: int, widths: Sequence[int], standardised: bool) -> int:
    """Floats of a network block of ``n_inputs`` inputs and hidden layers ``widths``."""
    if not widths:
        return NET_HEADER
    size, below = NET_HEADER + (2 * n_inputs if standardised else 0), n_inputs
    for width in widths:
        size += below * width + width
        below = width
    return size + below + 1


def pack_network(weights: Sequence[np.ndarray], biases: Sequence[np.ndarray | float],
                 mean: np.ndarray | None = None, scale: np.ndarray | None = None) -> np.ndarray:
    """The network block of a ReLU network: ``weights`` the hidden layers' matrices (n_in × w,
    as scikit-learn's ``coefs_``) then the output's (w_k or w_k × 1), ``biases`` theirs (the
    output's a number or one-element vector); with ``mean`` and ``scale`` (n) its inputs are
    standardised first.  A :class:`NetworkError` when the shapes do not chain."""
    if len(weights) != len(biases) or not 2 <= len(weights) <= NET_MAX_LAYERS + 1:
        raise NetworkError(f"a network has 1..{NET_MAX_LAYERS} hidden layers and an output: got {len(weights)} weight "
                           f"matrices and {len(biases)} bias vectors")
    if (mean is None) != (scale is None):
        raise NetworkError("standardised inputs need both mean and scale")
    layers = [np.asarray(w, dtype=np.float64) for w in weights]
    n_inputs = layers[0].shape[0] if layers[0].ndim == 2 else -1
    parts, widths, below = [], [], n_inputs
    for w, b in zip(layers[:-1], biases[:-1]):
        b = np.ravel(np.asarray(b, dtype=np.float64))
        if w.ndim != 2 or w.shape[0] != below or not 1 <= w.shape[1] <= MAX_WIDTH or b.shape != (w.shape[1],):
            raise NetworkError(f"hidden layer {len(widths) + 1}: weights {w.shape} and biases {b.shape} do not take "
                               f"{below} inputs into 1..{MAX_WIDTH} units")
        parts += [w.ravel(), b]
        widths.append(w.shape[1])
        below = w.shape[1]
    out_w = np.ravel(layers[-1])
    out_b = np.ravel(np.asarray(biases[-1], dtype=np.float64))
    if out_w.shape != (below,) or out_b.shape != (1,):
        raise NetworkError(f"the output: weights {layers[-1].shape} and bias {out_b.shape} do not take {below} units "
                           "into one value")
    header = np.zeros(NET_HEADER, dtype=np.float64)
    header[NET_MAGIC] = NETWORK_MAGIC
    header[NET_INPUTS] = n_inputs
    header[NET_LAYERS] = len(widths)
    header[NET_WIDTHS : NET_WIDTHS + len(widths)] = widths
    inputs = []
    if mean is not None:
        mean, scale = np.ravel(np.asarray(mean, dtype=np.float64)), np.ravel(np.asarray(scale, dtype=np.float64))
        if mean.shape != (n_inputs,) or scale.shape != (n_inputs,):
            raise NetworkError(f"mean {mean.shape} and scale {scale.shape} must hold one number per input ({n_inputs})")
        header[NET_STANDARDISED] = 1.0
        inputs = [mean, scale]
    block = np.concatenate([header, *inputs, *parts, out_w, out_b])
    assert block.size == network_size(n_inputs, widths, mean is not None)
    return block


def zero_network(n_inputs: int) -> np.ndarray:
    """The network block of no hidden layer: its value is 0 everywhere."""
    header = np.zeros(NET_HEADER, dtype=np.float64)
    header[NET_MAGIC] = NETWORK_MAGIC
    header[NET_INPUTS] = n_inputs
    return header


def network_widths(net: np.ndarray) -> tuple[int, ...]:
    """The hidden layers' widths of a (checked) network block; () for the zero network."""
    return tuple(int(w) for w in net[NET_WIDTHS : NET_WIDTHS + int(net[NET_LAYERS])])


def network_problem(net: np.ndarray, n_inputs: int, layers: Sequence[int]) -> str | None:
    """What keeps ``net`` (the finite tail of a checked block) from being a network block of
    ``n_inputs`` inputs and a number of hidden layers in ``layers``, exactly as long as its
    header says, with positive scales; None when it is one.  Words for a one-line error."""
    if net.size < NET_HEADER:
        return f"its block holds {net.size} numbers of network, fewer than a network's header (truncated?)"
    if net[NET_MAGIC] != NETWORK_MAGIC:
        return f"its network's magic number is {net[NET_MAGIC]:g}, not {NETWORK_MAGIC:g} (damaged?)"
    if net[NET_INPUTS] != n_inputs:
        return f"its network takes {net[NET_INPUTS]:g} inputs, this simkit has {n_inputs}"
    k = net[NET_LAYERS]
    if k not in layers:
        allowed = " or ".join(str(n) for n in layers)
        return f"its network has {k:g} hidden layers, not {allowed} (damaged?)"
    k = int(k)
    widths = net[NET_WIDTHS : NET_WIDTHS + NET_MAX_LAYERS]
    if not all(1 <= w <= MAX_WIDTH and w == int(w) for w in widths[:k]) or np.any(widths[k:] != 0):
        shown = ", ".join(f"{w:g}" for w in widths[:k])
        return f"its hidden layers are ({shown}) wide: 1..{MAX_WIDTH} only (damaged?)"
    if net[NET_STANDARDISED] not in (0.0, 1.0):
        return "its network's standardisation flag is neither 0 nor 1 (damaged?)"
    standardised = net[NET_STANDARDISED] == 1.0
    expected = network_size(n_inputs, [int(w) for w in widths[:k]], standardised)
    if net.size != expected:
        return f"its block holds {net.size} numbers of network, its header says {expected} (truncated?)"
    if k > 0 and standardised and np.any(net[NET_HEADER + n_inputs : NET_HEADER + 2 * n_inputs] <= 0):
        return "its feature scales must be positive (damaged?)"
    return None


# ---- the forward pass: bodies inlined into each variant's entry points (the module docstring)


@njit(nogil=True, inline="always")
def _weights_at(net):
    """Where the first hidden layer's weights start."""
    return NET_HEADER + 2 * int(net[NET_INPUTS]) if net[NET_STANDARDISED] != 0.0 else NET_HEADER


@njit(cache=True, nogil=True)
def network_offsets(net):
    """(mean, scale, first layer's weights, output weights) offsets in the block ``net`` (mean
    and scale -1 without standardisation; the output's bias follows its weights)."""
    n = int(net[NET_INPUTS])
    below = n
    at = _weights_at(net)
    first = at
    for layer in range(int(net[NET_LAYERS])):
        width = int(net[NET_WIDTHS + layer])
        at += below * width + width
        below = width
    if net[NET_STANDARDISED] != 0.0:
        return NET_HEADER, NET_HEADER + n, first, at
    return -1, -1, first, at


@njit(nogil=True, inline="always")
def _first_layer(net, x, h):
    n = int(net[NET_INPUTS])
    width = int(net[NET_WIDTHS])
    w1 = _weights_at(net)
    b1 = w1 + n * width
    for j in range(width):
        h[j] = net[b1 + j]
    if net[NET_STANDARDISED] != 0.0:
        scale = NET_HEADER + n
        for i in range(n):
            z = (x[i] - net[NET_HEADER + i]) / net[scale + i]
            if z != 0.0:
                row = w1 + i * width
                for j in range(width):
                    h[j] += z * net[row + j]
    else:
        for i in range(n):
            v = x[i]
            if v != 0:
                row = w1 + i * width
                for j in range(width):
                    h[j] += v * net[row + j]


@njit(nogil=True, inline="always")
def _dense(net, a, out, at, below, width):
    """``out`` = b + Σ_j relu(a_j) W[j]: the layer whose weights (below × width) start at ``at``."""
    b = at + below * width
    for k in range(width):
        out[k] = net[b + k]
    for j in range(below):
        v = a[j]
        if v > 0.0:
            row = at + j * width
            for k in range(width):
                out[k] += v * net[row + k]


@njit(nogil=True, inline="always")
def _output(net, a, at, width):
    """b + Σ_k relu(a_k) w_k: the output whose weights (width) start at ``at``."""
    out = net[at + width]
    for k in range(width):
        if a[k] > 0.0:
            out += a[k] * net[at + k]
    return out


@njit(nogil=True, inline="always")
def _head(net, h, above):
    layers = int(net[NET_LAYERS])
    below = int(net[NET_WIDTHS])
    at = _weights_at(net) + int(net[NET_INPUTS]) * below + below
    if layers == 1:
        return _output(net, h, at, below)
    width = int(net[NET_WIDTHS + 1])
    _dense(net, h, above[0:MAX_WIDTH], at, below, width)
    at += below * width + width
    for layer in range(2, layers):
        below = width
        width = int(net[NET_WIDTHS + layer])
        _dense(net, above[(layer - 2) * MAX_WIDTH : (layer - 1) * MAX_WIDTH],
               above[(layer - 1) * MAX_WIDTH : layer * MAX_WIDTH], at, below, width)
        at += below * width + width
    return _output(net, above[(layers - 2) * MAX_WIDTH : (layers - 1) * MAX_WIDTH], at, width)


@hot_kernel(cache=True, nogil=True)
def first_layer(net, x, h):
    """``h`` (the first hidden layer's width) = the first layer's pre-activation of inputs
    ``x``: b_1 + Σ_i z_i W_1[i] over the inputs whose z is not zero."""
    _first_layer(net, x, h)


@hot_kernel(cache=True, nogil=True, fastmath=True)
def first_layer_fast(net, x, h):
    """:func:`first_layer` compiled with fast math (``learned``'s)."""
    _first_layer(net, x, h)


@hot_kernel(cache=True, nogil=True)
def shift(net, h, i, old, new):
    """Move the first layer's pre-activation ``h`` as input i goes from ``old`` to ``new``."""
    width = int(net[NET_WIDTHS])
    row = _weights_at(net) + i * width
    if net[NET_STANDARDISED] != 0.0:
        step = (new - old) / net[NET_HEADER + int(net[NET_INPUTS]) + i]
        for j in range(width):
            h[j] += step * net[row + j]
    else:
        d = new - old
        for j in range(width):
            h[j] += d * net[row + j]


@hot_kernel(cache=True, nogil=True)
def head(net, h, above):
    """The network's value from the first layer's pre-activation ``h`` (not changed);
    ``above``: :data:`HEAD_SCRATCH` floats for the layers above the first."""
    return _head(net, h, above)


@hot_kernel(cache=True, nogil=True, fastmath=True)
def head_fast(net, h, above):
    """:func:`head` compiled with fast math (``learned``'s)."""
    return _head(net, h, above)


@hot_kernel(cache=True, nogil=True)
def network_forward(net, x, scratch):
    """The network's value of inputs ``x`` (``scratch``: :data:`NET_SCRATCH` floats); 0 for
    the zero network."""
    if int(net[NET_LAYERS]) == 0:
        return 0.0
    first_layer(net, x, scratch[:MAX_WIDTH])
    return head(net, scratch[:MAX_WIDTH], scratch[MAX_WIDTH:])


@hot_kernel(cache=True, nogil=True)
def network_forward_fast(net, x, scratch):
    """:func:`network_forward` with the fast-math first layer and head (``learned``'s)."""
    if int(net[NET_LAYERS]) == 0:
        return 0.0
    first_layer_fast(net, x, scratch[:MAX_WIDTH])
    return head_fast(net, scratch[:MAX_WIDTH], scratch[MAX_WIDTH:])


# ---- the checks of a file's block, and the legacy reader: the blocks of the files written before this format


def header_problem(block: np.ndarray, header_size: int, magic_at: int, magic: float) -> str | None:
    """What keeps ``block`` from starting a block of its layout (both kinds of model file): a
    float64 vector of at least ``header_size`` finite numbers, ``magic`` at ``magic_at``; None
    when it does (its header's fields are then safe to compare and convert)."""
    if block.dtype != np.float64 or block.ndim != 1 or block.size < header_size:
        return "its block is not a float64 vector with a header (damaged)"
    if not np.all(np.isfinite(block)):
        return "its weights hold NaN or infinite numbers"
    if block[magic_at] != magic:
        return (f"its block's magic number is {block[magic_at]:g}, not {magic:g}: not a block of this kind and "
                "layout version, or damaged")
    return None


def checked_block(block: np.ndarray, header: int, magic: float, n_inputs: int, layers: Sequence[int],
                  legacy_magic: float, from_legacy: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The block of a model file of one kind (its own header of ``header`` numbers, ``magic``
    first, then a network block of ``n_inputs`` inputs and a number of hidden layers in
    ``layers``), checked; a block of the kind's old layout (``legacy_magic`` first) is
    converted first by ``from_legacy`` (the legacy reader's).  A :class:`NetworkError` (one
    line) when it is not one."""
    if block.ndim == 1 and block.size > 0 and block[0] == legacy_magic:
        block = from_legacy(block)
    if problem := header_problem(block, header, 0, magic):
        raise NetworkError(problem)
    if problem := network_problem(block[header:], n_inputs, layers):
        raise NetworkError(problem)
    return block


def _legacy_header(block: np.ndarray, header: int, magic: float, features_at: int, n_inputs: int) -> None:
    """A :class:`NetworkError` unless ``block`` starts an old block of ``n_inputs`` inputs."""
    if problem := header_problem(block, header, 0, magic):
        raise NetworkError(problem)
    if block[features_at] != n_inputs:
        raise NetworkError(f"its block takes {block[features_at]:g} features, this simkit has {n_inputs}")



LEGACY_LEARNED_MAGIC = 700_002.0  # layout version 2: H_MAGIC, H_FEATURES, H_HIDDEN1, H_HIDDEN2, H_MARGIN, 16 expert weights
LEGACY_LEARNED_HEADER = 21
LEGACY_H_FEATURES, LEGACY_H_HIDDEN1, LEGACY_H_HIDDEN2, LEGACY_H_MARGIN, LEGACY_H_EXPERT = 1, 2, 3, 4, 5
LEGACY_VALUE_MAGIC = 7_310_571.0  # VB_MAGIC, VB_FEATURES, VB_HIDDEN (0: no network), VB_EXACT_WINS, VB_WEIGHT
LEGACY_VALUE_HEADER = 5
LEGACY_VB_FEATURES, LEGACY_VB_HIDDEN, LEGACY_VB_EXACT_WINS, LEGACY_VB_WEIGHT = 1, 2, 3, 4


def _legacy_widths(block: np.ndarray, at: Sequence[int], least: int) -> list[int]:
    widths = [block[i] for i in at]
    if not all(least <= w <= MAX_WIDTH and w == int(w) for w in widths):
        raise NetworkError(f"hidden layers {' and '.join(f'{w:g}' for w in widths)} wide: {least}..{MAX_WIDTH} only "
                           "(damaged?)")
    return [int(w) for w in widths]


def _legacy_network(block: np.ndarray, header: int, n_inputs: int, widths: list[int], standardised: bool) -> np.ndarray:
    """The network block of an old block's weights (laid out as a network block's after its
    header): a new header, then those weights as they are."""
    expected = header + network_size(n_inputs, widths, standardised) - NET_HEADER
    if block.size != expected:
        raise NetworkError(f"its block holds {block.size} numbers, its header says {expected} (truncated?)")
    net = zero_network(n_inputs)
    net[NET_LAYERS] = len(widths)
    net[NET_WIDTHS : NET_WIDTHS + len(widths)] = widths
    net[NET_STANDARDISED] = 1.0 if standardised else 0.0
    return np.concatenate([net, block[header:]])


def legacy_learned_parts(block: np.ndarray, n_inputs: int) -> tuple[float, np.ndarray, np.ndarray]:
    """(margin, expert weights, network block) of a ``learned`` block of layout version 2
    (:data:`LEGACY_LEARNED_MAGIC`, then features, H1, H2, margin, 16 expert weights; then W1
    (features scaled), b1, W2, b2, w3, b3) of ``n_inputs`` features.  A :class:`NetworkError`
    (one line) when it is not one: damaged, truncated, of another magic number or size."""
    _legacy_header(block, LEGACY_LEARNED_HEADER, LEGACY_LEARNED_MAGIC, LEGACY_H_FEATURES, n_inputs)
    widths = _legacy_widths(block, (LEGACY_H_HIDDEN1, LEGACY_H_HIDDEN2), 1)
    net = _legacy_network(block, LEGACY_LEARNED_HEADER, n_inputs, widths, False)
    expert = block[LEGACY_H_EXPERT : LEGACY_LEARNED_HEADER].copy()
    return float(block[LEGACY_H_MARGIN]), expert, net


def legacy_value_parts(block: np.ndarray, n_inputs: int) -> tuple[bool, float, np.ndarray]:
    """(exact wins, weight, network block) of a luck value block of the first layout
    (:data:`LEGACY_VALUE_MAGIC`, then features, H (0: no network), the exact-wins flag, the
    weight; then mean, scale, W1, b1, w2, b2) of ``n_inputs`` features.  A
    :class:`NetworkError` (one line) when it is not one: damaged, truncated, of another magic
    number or size."""
    _legacy_header(block, LEGACY_VALUE_HEADER, LEGACY_VALUE_MAGIC, LEGACY_VB_FEATURES, n_inputs)
    if block[LEGACY_VB_EXACT_WINS] not in (0.0, 1.0):
        raise NetworkError("its exact-wins flag is neither 0 nor 1 (damaged?)")
    n = n_inputs
    widths = _legacy_widths(block, (LEGACY_VB_HIDDEN,), 0)
    if widths == [0]:
        if block.size != LEGACY_VALUE_HEADER:
            raise NetworkError(f"its block holds {block.size} numbers, its header says {LEGACY_VALUE_HEADER} "
                               "(truncated?)")
        net = zero_network(n)
    else:
        net = _legacy_network(block, LEGACY_VALUE_HEADER, n, widths, True)
    return bool(block[LEGACY_VB_EXACT_WINS] == 1.0), float(block[LEGACY_VB_WEIGHT]), net
