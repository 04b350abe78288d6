"""``learned``: a value network Q(observation, action) fitted to self-play returns (DouZero's
deep Monte Carlo), played as the argmax over the legal actions.

**Features** (:data:`FEATURES`, one ``int64`` per feature, raw counts and flags; the model
file folds each feature's scale, :data:`FEATURE_SCALE`, into its first layer) describe the
*afterstate* of a candidate action from the acting player's observation only:

* own concealed counts as level bits (``count >= 1 .. 4`` per type), own exposed cards and
  exposed 出 (碰 / 楼) per type, own passed types, own 圆 count and cannot-win flag;
* per type the copies the player has not seen; per opponent (next, other) its exposed cards,
  its 出 and, from the public history, the cards of each type it discarded; their
  concealed-card counts, 相公 flags, who deals, the stock left;
* the action: its kind (discard, pass, 碰, 发子, 占, 吃), the type it gives away or takes,
  that type's unseen copies and what each opponent discarded and shows of it, the idle cards
  of the holding after it (:func:`simkit.evaluator.kernel.min_idle_kernel`), whether
  ``expert`` (with the weights the model was trained with) chooses it, and how far below its
  choice expert scores it (``F_GAP``).

**Network**: ``features → H1 → H2 → 1``, ReLU, fitted by :mod:`simkit.learn` to the acting
seat's payoff after the action, relative to the base policy's choice (牌, paired rollouts).  The state's part of the first layer is computed
once per decision; each candidate only adds the columns of the features it changes
(:func:`_apply_action` lists them), so a decision costs one sparse product plus a small one
per candidate.

**Weights** reach the kernel as numbers: the policy's parameter row is :data:`MODEL_OFFSET`
policy parameters followed by the model block (:func:`simkit.policies.model.model_block`): a
header (:data:`H_MAGIC`, the margin, the expert weights of the feature ``expert``), then the
network block (:mod:`simkit.policies.network`, from :data:`H_NET`; its forward pass is that
module's, with fast math).  So any model plays through the same cached kernels, in every
command and worker.

A legal win is always declared (as ``expert`` with ``min_units`` 1); a decision with one
legal action is not evaluated; the largest Q is played unless it beats expert's choice by no
more than the model's margin (``H_MARGIN``).  Deterministic: it draws no random numbers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simkit.cards import N_COPIES, N_SEATS, N_TYPES
from simkit.deck import STOCK_CARDS
from simkit.engine import kernel as E
from simkit.engine.layout import (
    A_KONG,
    A_PASS,
    A_PENG,
    A_WIN,
    A_ZHAN,
    E_DISCARD,
    HIST_WIDTH,
    MELD_TYPES,
    N_ACTIONS,
    O_ACTIVE,
    O_CONC,
    O_DEAD,
    O_DEALER,
    O_EXP,
    O_EXPCARDS,
    O_HIST,
    O_LOCK,
    O_NCHOW,
    O_NCONC,
    O_NHIST,
    O_NOWIN,
    O_PHASE,
    O_SEAT,
    O_SOURCE,
    O_STOCK_LEFT,
    O_XIANGGONG,
    PH_DISCARD,
    SRC_DRAW,
    chain_regions,
)
from simkit.evaluator import kernel as K
from simkit.exposed import EXP_BLOCK, EXP_KONG, EXP_PENG
from simkit.jit import hot_kernel
from simkit.policies.expert import EXPERT_WORK_SIZE, expert_act_scores
from simkit.policies.network import (
    MAX_WIDTH,
    NET_SCRATCH,
    NET_WIDTHS,
    first_layer_fast,
    head_fast,
    network_forward_fast,
    network_size,
    shift,
)

# ---- features: one region per group (chain_regions), raw integer values
KINDS = ("discard", "pass", "peng", "kong", "zhan", "chow")
KIND_DISCARD, KIND_PASS, KIND_PENG, KIND_KONG, KIND_ZHAN, KIND_CHOW = range(len(KINDS))
FEATURES = chain_regions((
    ("F_LEVEL", N_TYPES * N_COPIES),  # own concealed count >= k + 1, at 4 t + k
    ("F_OWN_OUT", N_TYPES),  # own exposed 碰 / 楼 of the type (0 / 1)
    ("F_OWN_EXP", N_TYPES),  # own exposed cards of the type (0..4)
    ("F_LOCK", N_TYPES),  # own passed type
    ("F_UNSEEN", N_TYPES),  # copies the player has not seen (0..4)
    ("F_NEXT_OUT", N_TYPES),  # next player's exposed 碰 / 楼
    ("F_OTHER_OUT", N_TYPES),  # the other opponent's
    ("F_NEXT_EXP", N_TYPES),  # next player's exposed cards
    ("F_OTHER_EXP", N_TYPES),
    ("F_NEXT_DISC", N_TYPES),  # cards of the type the next player discarded (public history)
    ("F_OTHER_DISC", N_TYPES),
    ("F_ACT_TYPE", N_TYPES),  # the type the action gives away (discard) or takes / declines (claim, pass)
    ("F_KIND", len(KINDS)),  # the action's kind
    ("F_STOCK", 1),  # stock cards left
    ("F_NCONC_NEXT", 1),  # concealed cards of the next player
    ("F_NCONC_OTHER", 1),
    ("F_XG_NEXT", 1),  # 相公 flags
    ("F_XG_OTHER", 1),
    ("F_DEALER_ME", 1),
    ("F_DEALER_NEXT", 1),
    ("F_NCHOW", 1),  # own exposed 圆
    ("F_NOWIN", 1),  # own cannot-win flag
    ("F_FROM_DRAW", 1),  # the active card was drawn (a claim decision)
    ("F_IDLE", 1),  # idle cards of the concealed holding (after the action)
    ("F_EXPERT", 1),  # expert chooses this action
    ("F_X_UNSEEN", 1),  # the action type's unseen copies
    ("F_X_NEXT_DISC", 1),  # ... discarded by the next player
    ("F_X_OTHER_DISC", 1),
    ("F_X_NEXT_OUT", 1),  # ... shown as 出 by the next player
    ("F_X_OTHER_OUT", 1),
    ("F_GAP", 1),  # expert's score of its choice minus this action's, in units of GAP_UNIT (capped at GAP_CAP)
))
(F_LEVEL, F_OWN_OUT, F_OWN_EXP, F_LOCK, F_UNSEEN, F_NEXT_OUT, F_OTHER_OUT, F_NEXT_EXP, F_OTHER_EXP, F_NEXT_DISC,
 F_OTHER_DISC, F_ACT_TYPE, F_KIND, F_STOCK, F_NCONC_NEXT, F_NCONC_OTHER, F_XG_NEXT, F_XG_OTHER, F_DEALER_ME,
 F_DEALER_NEXT, F_NCHOW, F_NOWIN, F_FROM_DRAW, F_IDLE, F_EXPERT, F_X_UNSEEN, F_X_NEXT_DISC, F_X_OTHER_DISC,
 F_X_NEXT_OUT, F_X_OTHER_OUT, F_GAP) = FEATURES.offsets
GAP_UNIT = 2.0  # expert score points per unit of F_GAP (an idle card weighs about 58)
GAP_CAP = 255  # F_GAP of a gap >= 510 points, a choice that forbids winning, or a decision expert does not score
N_FEATURES = FEATURES.size
FEATURE_NAMES = tuple(name for name, _, _ in FEATURES.table)


def _feature_scale() -> np.ndarray:
    """Scale of each raw feature (the network sees raw × scale, about 0..1)."""
    scale = np.ones(N_FEATURES, dtype=np.float64)
    for name, offset, size in FEATURES.table:
        if name in ("F_OWN_EXP", "F_UNSEEN", "F_NEXT_EXP", "F_OTHER_EXP", "F_NEXT_DISC", "F_OTHER_DISC",
                    "F_X_UNSEEN", "F_X_NEXT_DISC", "F_X_OTHER_DISC"):
            scale[offset : offset + size] = 1.0 / N_COPIES
        elif name == "F_STOCK":
            scale[offset] = 1.0 / STOCK_CARDS
        elif name in ("F_NCONC_NEXT", "F_NCONC_OTHER"):
            scale[offset] = 1.0 / 31.0
        elif name in ("F_NCHOW", "F_IDLE"):
            scale[offset] = 1.0 / 8.0
        elif name == "F_GAP":
            scale[offset] = 1.0 / 64.0
    return scale


FEATURE_SCALE = _feature_scale()

# ---- the model block in a parameter row (after MODEL_OFFSET policy parameters)
MODEL_OFFSET = 16  # = simkit.policies.registry.N_PARAMS (checked there)
LAYOUT_VERSION = 3  # bump when FEATURES or the block layout change (version 2: the legacy block, read by simkit.policies.model)
MODEL_MAGIC = 7.0e5 + LAYOUT_VERSION
H_MAGIC = 0
H_MARGIN = 1  # play another action than expert's only when its value exceeds expert's choice's by more
H_EXPERT = 2  # 16 expert weights
N_EXPERT_WEIGHTS = 16
H_SIZE = H_EXPERT + N_EXPERT_WEIGHTS
H_NET = H_SIZE  # the network block (simkit.policies.network: features -> H1 -> H2 -> 1, inputs not standardised)
MAX_HIDDEN = MAX_WIDTH  # the widest hidden layer the scratch holds
MAX_CHANGED = 32  # the most features one action changes (a 4-colour 卒 圆 changes 14)

# ---- scratch (``work``, int64), after expert's regions (expert runs first, on its own)
LEARNED_WORK = chain_regions((
    ("LW_X", N_FEATURES),  # the features (the decision's, then a candidate's)
    ("LW_CHANGED", MAX_CHANGED),  # features a candidate changed ...
    ("LW_OLD", MAX_CHANGED),  # ... and their values before
    ("LW_N_CHANGED", 1),
    ("LW_MARK", N_FEATURES),  # 1 where a feature is in the changed list (0 between candidates)
    ("LW_CONC", N_TYPES),  # the holding (changed and restored)
    ("LW_USED", MELD_TYPES),
    ("LW_H_PRE", MAX_HIDDEN),  # float64 (viewed): the first layer of the decision's features
    ("LW_H", NET_SCRATCH),  # float64: a candidate's first layer (MAX_HIDDEN), then the layers above it
    ("LW_VALUES", N_ACTIONS),  # float64: Q of each action
    ("LW_SCORES", N_ACTIONS),  # float64: expert's score of each action
), base=EXPERT_WORK_SIZE)
(LW_X, LW_CHANGED, LW_OLD, LW_N_CHANGED, LW_MARK, LW_CONC, LW_USED, LW_H_PRE, LW_H, LW_VALUES,
 LW_SCORES) = LEARNED_WORK.offsets
LEARNED_WORK_SIZE = LEARNED_WORK.size


def block_size(n_features: int, hidden1: int, hidden2: int) -> int:
    """Floats of a model block (header, then the network block)."""
    return H_SIZE + network_size(n_features, (hidden1, hidden2), False)


@hot_kernel(cache=True, nogil=True)
def _set(x, f, value, work):
    """x[f] = value, remembering f and its value before (once per candidate)."""
    if x[f] == value:
        return
    if work[LW_MARK + f] == 0:
        n = work[LW_N_CHANGED]
        work[LW_CHANGED + n] = f
        work[LW_OLD + n] = x[f]
        work[LW_N_CHANGED] = n + 1
        work[LW_MARK + f] = 1
    x[f] = value


@hot_kernel(cache=True, nogil=True)
def _clear_marks(work):
    """No feature is in the changed list (the scratch is shared: other policies write it)."""
    work[LW_N_CHANGED] = 0
    for f in range(N_FEATURES):
        work[LW_MARK + f] = 0


@hot_kernel(cache=True, nogil=True)
def _restore(obs, x, conc, work):
    """Undo the changes :func:`_set` remembered, and those of the holding ``conc`` (a card
    leaves it only through :func:`_take_card`, which clears a level bit of its type)."""
    for i in range(work[LW_N_CHANGED]):
        f = work[LW_CHANGED + i]
        x[f] = work[LW_OLD + i]
        work[LW_MARK + f] = 0
        if F_LEVEL <= f < F_LEVEL + N_TYPES * N_COPIES:
            t = (f - F_LEVEL) // N_COPIES
            conc[t] = obs[O_CONC + t]
    work[LW_N_CHANGED] = 0


@hot_kernel(cache=True, nogil=True)
def decision_features(obs, x, conc):
    """Fill ``x`` with the features of the decision before any action (action fields 0) and
    ``conc`` with the player's concealed counts, from observation ``obs`` only."""
    me = obs[O_SEAT]
    nxt = (me + 1) % N_SEATS
    other = (me + 2) % N_SEATS
    for f in range(N_FEATURES):
        x[f] = 0
    active = obs[O_ACTIVE] if obs[O_PHASE] != PH_DISCARD else -1
    for t in range(N_TYPES):
        c = obs[O_CONC + t]
        conc[t] = c
        for k in range(c):
            x[F_LEVEL + N_COPIES * t + k] = 1
        seen = c + obs[O_DEAD + t]
        for q in range(N_SEATS):
            seen += obs[O_EXPCARDS + N_TYPES * q + t]
        if t == active:
            seen += 1
        u = N_COPIES - seen
        x[F_UNSEEN + t] = u if u > 0 else 0
        x[F_OWN_EXP + t] = obs[O_EXPCARDS + N_TYPES * me + t]
        x[F_NEXT_EXP + t] = obs[O_EXPCARDS + N_TYPES * nxt + t]
        x[F_OTHER_EXP + t] = obs[O_EXPCARDS + N_TYPES * other + t]
        x[F_OWN_OUT + t] = 1 if (obs[O_EXP + EXP_BLOCK * me + N_TYPES * EXP_PENG + t]
                                 + obs[O_EXP + EXP_BLOCK * me + N_TYPES * EXP_KONG + t]) > 0 else 0
        x[F_NEXT_OUT + t] = 1 if (obs[O_EXP + EXP_BLOCK * nxt + N_TYPES * EXP_PENG + t]
                                  + obs[O_EXP + EXP_BLOCK * nxt + N_TYPES * EXP_KONG + t]) > 0 else 0
        x[F_OTHER_OUT + t] = 1 if (obs[O_EXP + EXP_BLOCK * other + N_TYPES * EXP_PENG + t]
                                   + obs[O_EXP + EXP_BLOCK * other + N_TYPES * EXP_KONG + t]) > 0 else 0
        x[F_LOCK + t] = 1 if obs[O_LOCK + N_TYPES * me + t] != 0 else 0
    for row in range(obs[O_NHIST]):
        h = O_HIST + HIST_WIDTH * row
        if obs[h] == E_DISCARD:
            q = obs[h + 1]
            if q == nxt:
                x[F_NEXT_DISC + obs[h + 2]] += 1
            elif q == other:
                x[F_OTHER_DISC + obs[h + 2]] += 1
    x[F_STOCK] = obs[O_STOCK_LEFT]
    x[F_NCONC_NEXT] = obs[O_NCONC + nxt]
    x[F_NCONC_OTHER] = obs[O_NCONC + other]
    x[F_XG_NEXT] = 1 if obs[O_XIANGGONG + nxt] != 0 else 0
    x[F_XG_OTHER] = 1 if obs[O_XIANGGONG + other] != 0 else 0
    x[F_DEALER_ME] = 1 if obs[O_DEALER] == me else 0
    x[F_DEALER_NEXT] = 1 if obs[O_DEALER] == nxt else 0
    x[F_NCHOW] = obs[O_NCHOW + me]
    x[F_NOWIN] = 1 if obs[O_NOWIN + me] != 0 else 0
    x[F_FROM_DRAW] = 1 if active >= 0 and obs[O_SOURCE] == SRC_DRAW else 0
    x[F_IDLE] = K.min_idle_kernel(conc)


@hot_kernel(cache=True, nogil=True)
def _take_card(x, conc, t, work):
    """One concealed card of type t leaves the holding: its top level bit clears."""
    c = conc[t]
    _set(x, F_LEVEL + N_COPIES * t + c - 1, 0, work)
    conc[t] = c - 1


@hot_kernel(cache=True, nogil=True)
def _apply_action(obs, x, conc, action, choice, scores, work):
    """Change ``x`` (the decision's features) into the afterstate features of ``action``
    (every change through :func:`_set`; ``conc`` changes too: :func:`_restore` undoes both)."""
    work[LW_N_CHANGED] = 0
    used = work[LW_USED : LW_USED + MELD_TYPES]
    if action < N_TYPES:
        t = action
        kind = KIND_DISCARD
        _take_card(x, conc, t, work)
    else:
        t = obs[O_ACTIVE]
        if action == A_PASS:
            kind = KIND_PASS
            _set(x, F_LOCK + t, 1, work)
        else:
            if action == A_PENG:
                kind = KIND_PENG
            elif action == A_KONG:
                kind = KIND_KONG
            elif action == A_ZHAN:
                kind = KIND_ZHAN
            else:
                kind = KIND_CHOW
            E.meld_cards(action, t, used)
            for i in range(MELD_TYPES):
                u = used[i]
                if u >= 0:
                    _take_card(x, conc, u, work)
                    _set(x, F_OWN_EXP + u, x[F_OWN_EXP + u] + 1, work)
            _set(x, F_OWN_EXP + t, x[F_OWN_EXP + t] + 1, work)
            if kind == KIND_PENG or kind == KIND_KONG:
                _set(x, F_OWN_OUT + t, 1, work)
            if kind == KIND_CHOW:
                _set(x, F_NCHOW, x[F_NCHOW] + 1, work)
    _set(x, F_IDLE, K.min_idle_kernel(conc), work)
    _set(x, F_ACT_TYPE + t, 1, work)
    _set(x, F_KIND + kind, 1, work)
    _set(x, F_EXPERT, 1 if action == choice else 0, work)
    _set(x, F_X_UNSEEN, x[F_UNSEEN + t], work)
    _set(x, F_X_NEXT_DISC, x[F_NEXT_DISC + t], work)
    _set(x, F_X_OTHER_DISC, x[F_OTHER_DISC + t], work)
    _set(x, F_X_NEXT_OUT, x[F_NEXT_OUT + t], work)
    _set(x, F_X_OTHER_OUT, x[F_OTHER_OUT + t], work)
    _set(x, F_GAP, _gap(scores, choice, action), work)


@hot_kernel(cache=True, nogil=True)
def _gap(scores, choice, action):
    """F_GAP of ``action``: expert's score of its choice minus the action's, in GAP_UNITs."""
    if action == choice:
        return 0
    gap = scores[choice] - scores[action]
    if not np.isfinite(gap) or gap >= GAP_UNIT * GAP_CAP:
        return GAP_CAP
    if gap <= 0.0:
        return 0
    return int(gap / GAP_UNIT + 0.5)


@njit(cache=True, nogil=True)
def expert_choice(obs, mask, model, rules, work):
    """expert's action on ``obs`` with the model's expert weights (the feature ``F_EXPERT``),
    its score of every action left in the scratch (``LW_SCORES``, for ``F_GAP``; a discard
    scoring ``GAP_UNIT × GAP_CAP`` or more below the choice may get -inf: its ``F_GAP`` is the cap
    either way)."""
    scores = work[LW_SCORES : LW_SCORES + N_ACTIONS].view(np.float64)
    return expert_act_scores(obs, mask, model[H_EXPERT : H_EXPERT + N_EXPERT_WEIGHTS], rules, work, scores,
                             GAP_UNIT * GAP_CAP)


@njit(cache=True, nogil=True)
def action_features(obs, mask, action, model, rules, work, out):
    """The afterstate features of ``action`` (legal, not a win) on ``obs`` into ``out``
    (``int64``, :data:`N_FEATURES`): what the self-play recorder stores for a decision."""
    choice = expert_choice(obs, mask, model, rules, work)
    x = work[LW_X : LW_X + N_FEATURES]
    conc = work[LW_CONC : LW_CONC + N_TYPES]
    decision_features(obs, x, conc)
    _clear_marks(work)
    _apply_action(obs, x, conc, action, choice, work[LW_SCORES : LW_SCORES + N_ACTIONS].view(np.float64), work)
    for f in range(N_FEATURES):
        out[f] = x[f]
    _restore(obs, x, conc, work)


@njit(cache=True, nogil=True)
def network_value(model, x, work):
    """The network's output for raw features ``x`` (the whole first layer: what
    :func:`action_values` computes column by column)."""
    return network_forward_fast(model[H_NET:], x, work[LW_H : LW_H + NET_SCRATCH].view(np.float64))


@njit(cache=True, nogil=True)
def action_values(obs, mask, model, rules, work, values):
    """Q of every legal non-win action of ``obs`` under the model block ``model`` into
    ``values`` (N_ACTIONS floats; -inf elsewhere); returns expert's choice.  The decision's
    first layer is computed once; each candidate adds only the columns of the features it
    changes (:func:`_apply_action`, :func:`simkit.policies.network.shift`)."""
    net = model[H_NET:]
    h1 = int(net[NET_WIDTHS])
    choice = expert_choice(obs, mask, model, rules, work)
    x = work[LW_X : LW_X + N_FEATURES]
    conc = work[LW_CONC : LW_CONC + N_TYPES]
    h_pre = work[LW_H_PRE : LW_H_PRE + MAX_HIDDEN].view(np.float64)
    h = work[LW_H : LW_H + MAX_HIDDEN].view(np.float64)
    above = work[LW_H + MAX_HIDDEN : LW_H + NET_SCRATCH].view(np.float64)
    scores = work[LW_SCORES : LW_SCORES + N_ACTIONS].view(np.float64)
    decision_features(obs, x, conc)
    _clear_marks(work)
    first_layer_fast(net, x, h_pre)
    for a in range(N_ACTIONS):
        values[a] = -np.inf
        if not mask[a] or a == A_WIN:
            continue
        _apply_action(obs, x, conc, a, choice, scores, work)
        for j in range(h1):
            h[j] = h_pre[j]
        for i in range(work[LW_N_CHANGED]):
            f = work[LW_CHANGED + i]
            shift(net, h, f, work[LW_OLD + i], x[f])
        values[a] = head_fast(net, h, above)
        _restore(obs, x, conc, work)
    return choice


@njit(cache=True, nogil=True)
def learned_act(obs, mask, params, rules, work):
    """The learned policy on an observation: a legal win, the only legal action, else the
    legal action of largest Q (the first of equals), unless it beats expert's choice by no
    more than the model's margin (then expert's choice).  ``params``: :data:`MODEL_OFFSET` policy
    parameters, then the model block."""
    n_legal = 0
    only = -1
    for a in range(N_ACTIONS):
        if mask[a]:
            n_legal += 1
            only = a
    if mask[A_WIN]:
        return A_WIN
    if n_legal == 1:
        return only
    values = work[LW_VALUES : LW_VALUES + N_ACTIONS].view(np.float64)
    model = params[MODEL_OFFSET:]
    choice = action_values(obs, mask, model, rules, work, values)
    best = -1
    for a in range(N_ACTIONS):
        if mask[a] and (best < 0 or values[a] > values[best]):
            best = a
    if best != choice and mask[choice] and values[best] - values[choice] <= model[H_MARGIN]:
        return choice
    return best
