"""One batch of deals -> one Arrow table (the dataset's row format).

Columns (one row per deal, or per deal and seating with seating ``all``; ``k`` = seat 0, 1, 2;
K = session length; dtypes as stored; schema version 2):

=====================  ==========  ==========================================================
``deal_id``            int64       deal number N of the run (replay it with ``simkit replay``)
``batch``              int32       batch index
``session``            int64       session number ``deal_id // K`` (only when K > 1)
``deal_in_session``    int16       position ``deal_id % K`` in the session (only when K > 1)
``seating``            int8        the seating the row was played under (row of
                                   :data:`simkit.runner.play.PERMUTATIONS`): ``(deal_id // K)
                                   % 3`` with seating ``rotate``, 0..5 with ``all`` (6 rows per
                                   deal); absent with ``fixed`` (load_dataset derives 0)
``dealer``             int8        dealing seat: 0 for independent deals (K = 1) and for the
                                   first deal of a session; later deals of a session are dealt
                                   by the previous deal's winner, after 穿牌 by the next seat or
                                   the same one (rule option ``next_dealer``)
``policy_k``           dictionary  policy seat k played in this row, with its parameters
                                   (``patient:2,6,1``): a string dictionary of the run's
                                   distinct policies (manifest ``policies``), the same in
                                   every batch; with fixed seats it holds seat k's policy only
``winner``             int8        winning seat, -1 for 穿牌
``win_kind``           dictionary  ``discard`` / ``draw`` / ``table`` / ``tianhu`` / ``none``
``hu`` ``units``       int16       winner's hu and units; null on 穿牌 (pandas ``Int16``)
``lou`` ``steps``      int8        winner's 楼 and 步; null on 穿牌 (pandas ``Int8``)
``payoff_k``           int16       牌 won (+2U) or paid (-U)
``turns``              int16       discard phases played
``draws``              int16       cards drawn from the stock
``claims``             int16       碰 / 发子 / 吃 / 占 made
``stock_left``         int8        stock cards left at the end
``xianggong_k``        bool        seat k became 相公
``nowin_k``            bool        seat k lost the right to win (有子不发 / 有车子不出车)
``pattern_<name>``     bool        the winner's holding has that pattern (18 columns)
``winner_concealed``   string      winner's final concealed cards (``simkit score`` notation)
``winner_exposed``     string      winner's exposed groups (``--exposed`` notation)
``dealt_jiang_k``      int8        将 in seat k's dealt hand
``dealt_pairs_k``      int8        types held >= 2 times
``dealt_zi_k``         int8        types held exactly 3 times (子)
``dealt_nao_k``        int8        types held 4 times (闹)
``dealt_chariots_k``   int8        chariot sets in the dealt hand: same-colour 将士相 / 车马炮
                                   with >= 2 of each, or >= 3 colours of 将 / 卒 with >= 2
``dealt_idle_k``       int8        fewest idle cards of the dealt hand
=====================  ==========  ==========================================================

Seats are places at the table: ``payoff_k``, ``dealt_*_k`` are about seat k whoever deals,
and ``policy_k`` says which policy sat there in this row (with fixed seats always the same).
The nullable winner columns reach pandas as ``Int16`` / ``Int8`` through the files' pandas
metadata (:func:`simkit.storage.dataset.pandas_metadata`), so ``pd.read_parquet(folder)``,
polars and duckdb read them as nulls; schema version 1 (datasets written before) stored -1
(hu) and 0 there, which :func:`simkit.storage.load_dataset` reads as nulls.  Runs with K = 1 carry no ``session`` / ``deal_in_session`` columns (their files are
unchanged from before sessions); :func:`simkit.storage.load_dataset` derives them
(``session = deal_id``, ``deal_in_session = 0``) when they are asked for.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from simkit.cards import N_COPIES, N_SEATS, N_TYPES, TYPE_NAMES
from simkit.engine import layout as L
from simkit.errors import SimkitError
from simkit.evaluator import PATTERN_NAMES
from simkit.evaluator import features as F
from simkit.runner import play as P
from simkit.storage.dataset import SCHEMA_VERSION, SEATING_COLUMN, WINNER_COLUMNS, pandas_metadata

WIN_KINDS = ("discard", "draw", "table", "tianhu", "none")


# the dealt_<name>_k columns: (name, feature of simkit.evaluator.features)
DEALT_COLUMNS = (("jiang", F.F_JIANG), ("pairs", F.F_PAIRS), ("zi", F.F_ZI), ("nao", F.F_NAO),
                 ("chariots", F.F_CHARIOTS), ("idle", F.F_MIN_IDLE))


@njit(cache=True)
def _dealt_features(dealt, out):
    """dealt: (n, N_SEATS, N_TYPES) counts -> out (n, N_SEATS, N_FEATURES): hand_features up to LEVEL_IDLE."""
    rules = np.zeros(1, dtype=np.int64)  # not read below LEVEL_EVAL
    exposed, res, choice, work = F.feature_scratch()
    for i in range(dealt.shape[0]):
        for p in range(N_SEATS):
            F.hand_features(dealt[i, p], F.LEVEL_IDLE, rules, exposed, res, choice, work, out[i, p])


_COUNT_TOKENS = np.array([[""] + [name] + [f"{name}*{c}" for c in range(2, N_COPIES + 1)] for name in TYPE_NAMES],
                         dtype=object)


def _join_rows(tokens: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """Space-join a flat token array cut into rows of the given lengths (vectorised)."""
    offsets = np.zeros(lengths.size + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    lists = pa.ListArray.from_arrays(pa.array(offsets), pa.array(tokens.tolist(), type=pa.string()))
    return pc.binary_join(lists, " ")


def concealed_notation(counts: np.ndarray) -> pa.Array:
    """``simkit score`` notation of (n, N_TYPES) count rows, e.g. ``RJ*3 RS``."""
    mask = counts > 0
    rows, types = np.nonzero(mask)
    tokens = _COUNT_TOKENS[types, counts[rows, types]]
    return _join_rows(tokens, mask.sum(axis=1))


def exposed_notation(melds: np.ndarray, n_melds: np.ndarray) -> pa.Array:
    """``--exposed`` notation of meld rows (n, MAX_MELDS, MELD_WIDTH) with n_melds used."""
    used = np.arange(melds.shape[1])[None, :] < n_melds[:, None]
    flat = melds[used]  # (m, MELD_WIDTH) in row order
    # one integer key per meld: its kind, then its types + 1 (-1 unused -> 0) as digits of base N_TYPES + 1
    base, n_slots = N_TYPES + 1, L.MELD_WIDTH - 1
    digits = base ** np.arange(n_slots - 1, -1, -1)
    keys = flat[:, 0] * base**n_slots + ((flat[:, 1:] + 1) * digits).sum(axis=1)
    unique, inverse = np.unique(keys, return_inverse=True)
    texts = []
    for key in unique.tolist():
        kind, rest = divmod(int(key), base**n_slots)
        types = [(rest // base**j) % base - 1 for j in range(n_slots - 1, -1, -1)]
        texts.append(f"{L.MELD_KIND_NAMES[kind]}:{','.join(TYPE_NAMES[t] for t in types if t >= 0)}")
    tokens = np.array(texts, dtype=object)[inverse] if unique.size else np.array([], dtype=object)
    return _join_rows(tokens, used.sum(axis=1))


def seatings(n_deals: int, first_deal: int, seating: int, session_length: int = 1) -> np.ndarray:
    """The seating (row of :data:`~simkit.runner.play.PERMUTATIONS`) of each result row of
    deals first_deal .. first_deal + n_deals - 1 (the kernels' :func:`~simkit.runner.play.seating_index`)."""
    per_deal = P.rows_per_deal(seating)
    deal = np.repeat(np.arange(first_deal, first_deal + n_deals, dtype=np.int64), per_deal)
    if seating == P.SEATING_ROTATE:
        return (deal // session_length) % 3
    if seating == P.SEATING_ALL:
        return np.tile(np.arange(per_deal, dtype=np.int64), n_deals)
    return np.zeros(deal.size, dtype=np.int64)


def results_table(results: np.ndarray, first_deal: int, batch: int, policy_texts: list[str],
                  session_length: int = 1, seating: int = P.SEATING_FIXED,
                  schema_version: int = SCHEMA_VERSION) -> pa.Table:
    """The dataset rows of a block of result rows (sessions of ``session_length`` deals; the
    run's policies ``policy_texts`` seated by ``seating``, :mod:`simkit.runner.play`).

    ``schema_version`` 1 writes the format of datasets from before version 2 (when one of
    them is resumed): -1 / 0 instead of nulls, no seating (fixed seats only), no pandas metadata."""
    per_deal = P.rows_per_deal(seating)
    n = results.shape[0]
    if n % per_deal:
        raise ValueError(f"{n} result rows are not whole deals of {per_deal} rows")
    if schema_version < 2 and seating != P.SEATING_FIXED:
        raise ValueError("schema version 1 has fixed seats only")
    cols: dict[str, pa.Array] = {}
    deal_id = np.repeat(np.arange(first_deal, first_deal + n // per_deal, dtype=np.int64), per_deal)
    cols["deal_id"] = pa.array(deal_id)
    cols["batch"] = pa.array(np.full(n, batch, dtype=np.int32))
    if session_length > 1:
        cols["session"] = pa.array(deal_id // session_length)
        cols["deal_in_session"] = pa.array((deal_id % session_length).astype(np.int16))
    if seating == P.SEATING_FIXED:
        perm = np.zeros(n, dtype=np.int64)
    else:
        perm = seatings(n // per_deal, first_deal, seating, session_length)
        cols[SEATING_COLUMN] = pa.array(perm.astype(np.int8))
    cols["dealer"] = pa.array(results[:, P.R_DEALER].astype(np.int8))
    if seating == P.SEATING_FIXED:  # a one-entry dictionary per seat (as before seatings existed)
        for k in range(N_SEATS):
            cols[f"policy_{k}"] = pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(n, dtype=np.int32)), pa.array([policy_texts[k]]))
    else:  # the run's distinct policies, in order, as every column's dictionary
        names = list(dict.fromkeys(policy_texts))
        code = np.array([names.index(text) for text in policy_texts], dtype=np.int32)
        for k in range(N_SEATS):
            cols[f"policy_{k}"] = pa.DictionaryArray.from_arrays(
                pa.array(code[P.PERMUTATIONS[perm, k]]), pa.array(names))
    winner = results[:, P.R_WINNER]
    cols["winner"] = pa.array(winner.astype(np.int8))
    kind_index = np.where(winner >= 0, results[:, P.R_WIN_KIND], len(WIN_KINDS) - 1).astype(np.int32)
    cols["win_kind"] = pa.DictionaryArray.from_arrays(pa.array(kind_index), pa.array(list(WIN_KINDS)))
    none = winner < 0  # 穿牌: no winner, whose hu / units / 楼 / 步 are null
    if schema_version < 2:
        cols["hu"] = pa.array(np.where(winner >= 0, results[:, P.R_HU], -1).astype(np.int16))
        cols["lou"] = pa.array(results[:, P.R_LOU].astype(np.int8))
        cols["steps"] = pa.array(results[:, P.R_STEPS].astype(np.int8))
        cols["units"] = pa.array(results[:, P.R_UNITS].astype(np.int16))
    else:
        cols["hu"] = pa.array(results[:, P.R_HU].astype(np.int16), mask=none)
        cols["lou"] = pa.array(results[:, P.R_LOU].astype(np.int8), mask=none)
        cols["steps"] = pa.array(results[:, P.R_STEPS].astype(np.int8), mask=none)
        cols["units"] = pa.array(results[:, P.R_UNITS].astype(np.int16), mask=none)
    for k in range(N_SEATS):
        cols[f"payoff_{k}"] = pa.array(results[:, P.R_PAYOFF + k].astype(np.int16))
    cols["turns"] = pa.array(results[:, P.R_TURNS].astype(np.int16))
    cols["draws"] = pa.array(results[:, P.R_DRAWS].astype(np.int16))
    cols["claims"] = pa.array(results[:, P.R_CLAIMS].astype(np.int16))
    cols["stock_left"] = pa.array(results[:, P.R_STOCK_LEFT].astype(np.int8))
    for k in range(N_SEATS):
        cols[f"xianggong_{k}"] = pa.array(results[:, P.R_XIANGGONG + k].astype(bool))
    for k in range(N_SEATS):
        cols[f"nowin_{k}"] = pa.array(results[:, P.R_NOWIN + k].astype(bool))
    patterns = results[:, P.R_PATTERNS]
    for i, name in enumerate(PATTERN_NAMES):
        cols[f"pattern_{name}"] = pa.array(((patterns >> i) & 1).astype(bool))
    won = winner >= 0
    conc_text = concealed_notation(results[won, P.R_WIN_CONC : P.R_WIN_CONC + N_TYPES])
    melds = results[won, P.R_WIN_MELDS : P.R_WIN_MELDS + L.MAX_MELDS * L.MELD_WIDTH].reshape(-1, L.MAX_MELDS, L.MELD_WIDTH)
    exp_text = exposed_notation(melds, results[won, P.R_WIN_NMELDS])
    # scatter the winners' strings into n rows, nulls for 穿牌
    index = np.full(n, -1, dtype=np.int64)
    index[won] = np.arange(int(won.sum()))
    take = pa.array(np.where(index >= 0, index, 0), mask=index < 0)
    cols["winner_concealed"] = conc_text.take(take) if won.any() else pa.nulls(n, pa.string())
    cols["winner_exposed"] = exp_text.take(take) if won.any() else pa.nulls(n, pa.string())
    dealt = np.ascontiguousarray(results[:, P.R_DEALT : P.R_DEALT + N_SEATS * N_TYPES].reshape(n, N_SEATS, N_TYPES))
    feats = np.zeros((n, N_SEATS, F.N_FEATURES), dtype=np.int64)
    _dealt_features(dealt, feats)
    for name, j in DEALT_COLUMNS:
        for k in range(N_SEATS):
            cols[f"dealt_{name}_{k}"] = pa.array(feats[:, k, j].astype(np.int8))
    table = pa.table(cols)
    if schema_version >= 2:
        table = table.replace_schema_metadata({b"pandas": pandas_metadata(list(WINNER_COLUMNS))})
    return table


# ---- memory of a batch

BATCH_BYTES_PER_ROW = 3_200  # peak memory per result row of a batch in play (measured 3.06 kB: random x3,
# one batch of 200,000 deals: the kernels' int64 result rows, 2,040 bytes, and the Arrow table made from them)


def machine_memory() -> int | None:
    """Bytes of memory this process may use: the machine's physical memory, or a smaller limit
    of its control group (cgroup v2 ``memory.max``, as in containers); None where unknown."""
    limits = []
    try:
        limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as fh:
            text = fh.read().strip()
        if text.isdigit():
            limits.append(int(text))
    except OSError:
        pass
    limits = [n for n in limits if n > 0]
    return min(limits) if limits else None


def check_memory(need: int, what: str, parameter: str) -> None:
    """Refuse, in one line, work that needs ``need`` bytes of memory at once when this machine
    has less (:func:`machine_memory`), rather than let the system kill the run, with no word,
    when its memory runs out.  The message reads "``parameter`` ``what`` needs ...": ``what``
    names the work without repeating the parameter's name (the command line writes that
    name as its flag)."""
    limit = machine_memory()
    if limit is not None and need > limit:
        raise SimkitError(f"{parameter} {what} needs about {_size_text(need)} of memory, more than this machine's "
                          f"{_size_text(limit)} (a smaller {parameter} fits)", parameters=(parameter,))


def check_batch_memory(rows: int, at_once: int = 1, parameter: str = "batch_size") -> None:
    """:func:`check_memory` of a batch of ``rows`` result rows (:data:`BATCH_BYTES_PER_ROW`
    each), ``at_once`` batches in play together (one per worker process).

    >>> check_batch_memory(10_000)
    >>> check_batch_memory(10**12)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simkit.errors.SimkitError: batch_size 1,000,000,000,000: a batch of that many rows needs about 3,200,000.0 GB...
    """
    together = f", {at_once} at once (one per worker)," if at_once > 1 else ""
    check_memory(int(rows) * BATCH_BYTES_PER_ROW * max(1, int(at_once)),
                 f"{int(rows):,}: a batch of that many rows{together}", parameter)


def _size_text(n: int) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 1e9 else f"{n / 1e6:,.1f} MB"
