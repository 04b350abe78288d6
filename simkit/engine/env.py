"""A step-by-step Python API over the numba engine, with OpenSpiel's Game / State split.

* :class:`Game` is immutable: the rule set and the three seats' policy names (what a run is
  played with; the engine itself never reads the policies).
* :class:`State` is one deal in progress: ``current_player`` (:data:`NO_PLAYER` once the deal
  is over), ``legal_actions``, ``apply_action``, ``is_terminal``, ``returns``, ``clone``.

>>> game = Game()
>>> state = game.new_initial_state(seed=1)
>>> state.current_player(), len(state.legal_actions()) > 0
(0, True)
>>> while not state.is_terminal():
...     state.apply_action(state.legal_actions()[0])
>>> state.current_player() == NO_PLAYER, sum(state.returns())
(True, 0)

:class:`Environment` is the earlier one-object interface (a State that makes its own Game).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, Sequence

import numpy as np

from simkit.cards import N_CARDS, N_COPIES, N_SEATS, N_TYPES, TYPE_NAMES, format_counts, parse_types
from simkit.deck import deal_deck
from simkit.errors import SimkitError
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.exposed import EXP_BLOCK, N_EXP_ROWS, check_copies, exposed_arrays, parse_exposed
from simkit.rng import root_key
from simkit.rules import RuleSet

# ---- the rules of every deal loop (runner.play's compiled loops, runner.python_play, play_python)
MAX_DECISIONS = 2000  # decisions in one deal, far above any deal: a deal that reaches it is an error


def max_decisions_text(cap: int) -> str:
    """Why a deal that reached the cap ``cap`` (:data:`MAX_DECISIONS`) stopped."""
    return f"the deal did not end within MAX_DECISIONS = {cap} decisions"


class DealError(SimkitError):
    """A deal stopped before its end: a policy returned an illegal action, the deal reached
    :data:`MAX_DECISIONS`, or a seat's policy id is unknown.  Such a deal is never recorded."""


def deal_error_text(seed: int, deal: int, policies: Sequence[str], why: str) -> str:
    """The one line of a :class:`DealError`: the deal, the seed, the policies by seat, why.

    >>> deal_error_text(3, 7, ["mine", "greedy", "greedy"], "seat 0 (mine) returned an illegal action")
    'deal 7 of seed 3 (policies by seat: mine, greedy, greedy): seat 0 (mine) returned an illegal action'
    """
    return f"deal {deal} of seed {seed} (policies by seat: {', '.join(str(p) for p in policies)}): {why}"


@dataclasses.dataclass(frozen=True)
class Observation:
    """What one player may know (:func:`simkit.engine.kernel.observe`), the same for built-in
    and user policies.  ``array`` is the raw ``O_*`` vector given to numba policies."""

    seat: int
    phase: str
    player_to_act: int
    active_card: int  # type index, -1 when none
    active_source: str  # "discard" or "draw"
    active_source_player: int
    stock_left: int
    dealer: int
    concealed: np.ndarray  # own 28 counts
    exposed: np.ndarray  # (3, 4, 28) 占 / 碰 / 楼 / table 将 counts of every player
    exposed_cards: np.ndarray  # (3, 28) all exposed cards of every player
    n_chow: np.ndarray  # (3,)
    n_concealed: np.ndarray  # (3,) concealed card counts (public)
    dead: np.ndarray  # (28,)
    pass_locks: np.ndarray  # (3, 28): this seat's row only (another seat's passes are not seen)
    xianggong: np.ndarray  # (3,)
    cannot_win: np.ndarray  # (3,): this seat's flag only
    history: np.ndarray  # (n, 4) public history in order: (event kind E_*, player, type, detail)
    array: np.ndarray

    @classmethod
    def from_array(cls, obs: np.ndarray) -> "Observation":
        phase = {L.PH_DISCARD: "discard", L.PH_CLAIM: "claim", L.PH_OVER: "over"}.get(int(obs[L.O_PHASE]), "other")
        return cls(
            seat=int(obs[L.O_SEAT]),
            phase=phase,
            player_to_act=int(obs[L.O_PLAYER]),
            active_card=int(obs[L.O_ACTIVE]),
            active_source="discard" if obs[L.O_SOURCE] == L.SRC_DISCARD else "draw",
            active_source_player=int(obs[L.O_SOURCE_PLAYER]),
            stock_left=int(obs[L.O_STOCK_LEFT]),
            dealer=int(obs[L.O_DEALER]),
            concealed=obs[L.O_CONC : L.O_CONC + N_TYPES].copy(),
            exposed=obs[L.O_EXP : L.O_EXP + N_SEATS * EXP_BLOCK].reshape(N_SEATS, N_EXP_ROWS, N_TYPES).copy(),
            exposed_cards=obs[L.O_EXPCARDS : L.O_EXPCARDS + N_SEATS * N_TYPES].reshape(N_SEATS, N_TYPES).copy(),
            n_chow=obs[L.O_NCHOW : L.O_NCHOW + N_SEATS].copy(),
            n_concealed=obs[L.O_NCONC : L.O_NCONC + N_SEATS].copy(),
            dead=obs[L.O_DEAD : L.O_DEAD + N_TYPES].copy(),
            pass_locks=obs[L.O_LOCK : L.O_LOCK + N_SEATS * N_TYPES].reshape(N_SEATS, N_TYPES).copy(),
            xianggong=obs[L.O_XIANGGONG : L.O_XIANGGONG + N_SEATS].copy(),
            cannot_win=obs[L.O_NOWIN : L.O_NOWIN + N_SEATS].copy(),
            history=obs[L.O_HIST : L.O_HIST + L.HIST_WIDTH * int(obs[L.O_NHIST])].reshape(-1, L.HIST_WIDTH).copy(),
            array=obs.copy(),
        )


class PythonPolicy(Protocol):
    """Tier-2 plug-in: any object with ``act(observation, legal_actions) -> action``."""

    def act(self, observation: Observation, legal_actions: Sequence[int]) -> int: ...


NO_PLAYER = -1  # current_player() of a finished deal


@dataclasses.dataclass(frozen=True)
class Game:
    """The immutable part of a deal: the rule set and the seats' policy names.

    >>> Game(RuleSet(tianhu=False)).rules.tianhu
    False
    """

    rules: RuleSet = dataclasses.field(default_factory=RuleSet)
    policies: tuple[str, str, str] = ("greedy", "greedy", "greedy")
    num_players: int = dataclasses.field(default=L.N_SEATS, init=False)
    num_distinct_actions: int = dataclasses.field(default=L.N_ACTIONS, init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.rules, RuleSet):
            raise TypeError(f"rules must be a RuleSet, got {type(self.rules).__name__}")
        policies = tuple(self.policies)
        if len(policies) != L.N_SEATS or not all(isinstance(p, str) and p for p in policies):
            raise ValueError(f"a game needs three policy names, got {self.policies!r}")
        object.__setattr__(self, "policies", policies)

    def new_initial_state(self, seed: int = 0, deal: int = 0, dealer: int = 0) -> "State":
        """Deal number ``deal`` of run ``seed`` (the cards of a batch simulation's deal)."""
        state = State(self)
        state.new_deal(seed, deal, dealer)
        return state


class State:
    """One deal in progress under a :class:`Game` (mutable; :meth:`clone` copies it)."""

    def __init__(self, game: Game, event_capacity: int = 4096) -> None:
        self.game = game
        self.rules = game.rules
        self._rules_array = self.rules.to_array()
        self._state = np.zeros(L.N_STATE, dtype=np.int64)
        self._mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
        self._work = E.new_engine_workspace()
        self._events = np.zeros((event_capacity, L.EVENT_WIDTH), dtype=np.int64)
        self._n_events = np.zeros(1, dtype=np.int64)
        self._started = False
        self.seed = 0
        self.deal = 0

    # -- the contract
    def new_deal(self, seed: int, deal: int = 0, dealer: int = 0) -> None:
        """Deal number ``deal`` of run ``seed`` (the same cards as in a batch simulation)."""
        if not 0 <= int(dealer) < N_SEATS:
            raise ValueError(f"dealer must be 0, 1 or 2, got {dealer}")
        self.seed, self.deal = int(seed), int(deal)
        deck = np.zeros(N_CARDS, dtype=np.int64)
        rng = np.zeros(4, dtype=np.uint64)
        deal_deck(root_key(seed), self.deal, rng, deck)
        self._n_events[0] = 0
        E.start(self._state, deck, int(dealer), self._rules_array, self._mask, self._work, self._events, self._n_events)
        self._started = True

    def load_position(
        self,
        hands: Sequence[str],
        stock: str = "",
        player: int = 0,
        exposed: Sequence[str] = ("", "", ""),
        dealer: int = 0,
        first_phase: bool = False,
    ) -> None:
        """Start from a hand-built position: concealed ``hands`` and ``exposed`` groups of
        the three seats (``simkit score`` notation), ``stock`` top card first; every other
        card is dead.  ``player`` opens with a discard phase (``first_phase``: it is the
        dealer's opening one, so a win there is 天胡).  For scenario tests and analysis.
        """
        if len(hands) != N_SEATS or len(exposed) != N_SEATS:
            raise ValueError("need three hands and three exposed strings")
        counts = [np.zeros(N_TYPES, dtype=np.int64) for _ in range(N_SEATS)]
        groups = [parse_exposed(e) for e in exposed]
        used = np.zeros(N_TYPES, dtype=np.int64)
        for p in range(N_SEATS):
            for t in parse_types(hands[p]):
                counts[p][t] += 1
            check_copies(counts[p], groups[p])
            used += counts[p]
            for g in groups[p]:
                used += g.card_counts()
        stock_types = parse_types(stock)
        for t in stock_types:
            used[t] += 1
        if (used > N_COPIES).any():
            t = int(np.argmax(used > N_COPIES))
            raise ValueError(f"more than {N_COPIES} copies of {TYPE_NAMES[t]} in the position")
        s = self._state
        s[:] = 0
        # deck: cards in hands / exposed / dead first, the stock last (top first)
        next_copy = np.zeros(N_TYPES, dtype=np.int64)
        stock_ids = []
        for t in stock_types:
            stock_ids.append(t * N_COPIES + next_copy[t])
            next_copy[t] += 1
        rest = [t * N_COPIES + c for t in range(N_TYPES) for c in range(next_copy[t], N_COPIES)]
        deck = np.array(rest + stock_ids, dtype=np.int64)
        s[L.S_DECK : L.S_DECK + N_CARDS] = deck
        s[L.S_STOCK_POS] = N_CARDS - len(stock_ids)
        for p in range(N_SEATS):
            s[L.S_CONC + N_TYPES * p : L.S_CONC + N_TYPES * (p + 1)] = counts[p]
            exp, n_chow = exposed_arrays(groups[p])
            s[L.S_EXP + EXP_BLOCK * p : L.S_EXP + EXP_BLOCK * (p + 1)] = exp.ravel()
            s[L.S_NCHOW + p] = n_chow
            for g in groups[p]:
                s[L.S_EXPCARDS + N_TYPES * p : L.S_EXPCARDS + N_TYPES * (p + 1)] += g.card_counts()
                kind = L.MELD_KIND_NAMES.index(g.kind)
                types = list(g.types) + [-1] * (4 - len(g.types))
                E.add_meld(s, p, kind, types[0], types[1], types[2], types[3])
        s[L.S_DEAD : L.S_DEAD + N_TYPES] = N_COPIES - used  # every card not in play is dead
        s[L.S_DEALER] = dealer
        s[L.S_PLAYER] = player
        s[L.S_PHASE] = L.PH_DISCARD
        s[L.S_FIRST] = 1 if first_phase else 0
        s[L.S_GAIN] = L.WIN_TIANHU if first_phase else L.WIN_DISCARD
        s[L.S_GAIN_TYPE] = -1  # a set-up position was reached through no card
        s[L.S_ACTIVE] = -1
        s[L.S_ACTIVE_ID] = -1
        s[L.S_WINNER] = -1
        s[L.S_WIN_KIND] = -1
        s[L.S_HU] = -1
        self._n_events[0] = 0
        self._started = True
        E.advance(s, self._rules_array, self._mask, self._work, self._events, self._n_events)

    def _need_deal(self) -> None:
        if not self._started:
            raise RuntimeError("call new_deal(seed) first")

    def legal_actions(self) -> list[int]:
        """Legal action ids of the player to act (empty when the deal is over)."""
        self._need_deal()
        E.legal_mask(self._state, self._rules_array, self._mask, self._work)
        return [int(a) for a in np.flatnonzero(self._mask)]

    def apply(self, action: int) -> None:
        """Apply a legal action; raises ValueError for an illegal one (state unchanged)."""
        self._need_deal()
        ok = E.apply(self._state, int(action), self._rules_array, self._mask, self._work, self._events, self._n_events)
        if not ok:
            raise ValueError(f"illegal action {action} ({L.action_name(action) if 0 <= int(action) < L.N_ACTIONS else '?'})")

    def observation(self, player: int) -> Observation:
        """What ``player`` may see now."""
        self._need_deal()
        obs = np.zeros(L.N_OBS, dtype=np.int64)
        E.observe(self._state, int(player), obs)
        return Observation.from_array(obs)

    def is_terminal(self) -> bool:
        """True once the deal is over (a win or 穿牌)."""
        self._need_deal()
        return bool(self._state[L.S_PHASE] == L.PH_OVER)

    is_over = is_terminal

    def apply_action(self, action: int) -> None:
        """OpenSpiel's name of :meth:`apply`."""
        self.apply(action)

    def returns(self) -> list[int]:
        """Payoff of each seat (牌): winner +2U, the others -U; zeros before the end or on 穿牌."""
        self._need_deal()
        return [int(x) for x in self._state[L.S_PAYOFF : L.S_PAYOFF + N_SEATS]]

    def current_player(self) -> int:
        """Seat to act, or :data:`NO_PLAYER` once the deal is over."""
        self._need_deal()
        if self._state[L.S_PHASE] == L.PH_OVER:
            return NO_PLAYER
        return int(self._state[L.S_PLAYER])

    # -- extras
    @property
    def state_array(self) -> np.ndarray:
        """The raw state (read-only view)."""
        view = self._state.view()
        view.flags.writeable = False
        return view

    def clone(self) -> "State":
        """An independent copy (same game, state, event log)."""
        other = object.__new__(type(self))
        State.__init__(other, self.game, self._events.shape[0])
        other._state[:] = self._state
        other._events[:] = self._events
        other._n_events[:] = self._n_events
        other._started = self._started
        other.seed, other.deal = self.seed, self.deal
        return other

    def events(self) -> np.ndarray:
        """Event log rows (kind, player, type, a, b, c) so far."""
        return self._events[: int(self._n_events[0])].copy()

    def melds(self, player: int) -> list[tuple[str, tuple[int, ...]]]:
        """Exposed melds of a player in order: (kind, types)."""
        return [(L.MELD_KIND_NAMES[kind], types) for kind, types in L.state_melds(self._state, player)]

    def describe(self) -> dict[str, Any]:
        """Summary of the current deal (concealed hands included: for debugging and replay)."""
        s = self._state
        return {
            "phase": int(s[L.S_PHASE]),
            "player": int(s[L.S_PLAYER]),
            "stock_left": int(N_CARDS - s[L.S_STOCK_POS]),
            "hands": [format_counts(s[L.S_CONC + N_TYPES * p : L.S_CONC + N_TYPES * (p + 1)]) for p in range(N_SEATS)],
            "active": TYPE_NAMES[int(s[L.S_ACTIVE])] if s[L.S_ACTIVE] >= 0 else None,
        }


class Environment(State):
    """A :class:`State` that makes its own :class:`Game` from a rule set (the one-object
    interface of earlier versions)."""

    def __init__(self, rules: RuleSet | None = None, event_capacity: int = 4096) -> None:
        super().__init__(Game(rules if rules is not None else RuleSet()), event_capacity)


def play_python(policies: Sequence[PythonPolicy], seed: int, deal: int = 0, rules: RuleSet | None = None) -> State:
    """Play one deal with Python policy objects (tier 2 plug-ins); returns the finished state.
    A deal that has not ended after :data:`MAX_DECISIONS` decisions, or a policy that returns
    an illegal action, is a one-line :class:`DealError` naming the seed, the deal and the
    policies (as every deal loop does: :func:`simkit.runner.play.check_rows`); so is an
    exception raised by a policy's ``act`` (chained as the error's ``__cause__``)."""
    if len(policies) != N_SEATS:
        raise ValueError("play_python needs three policies, one per seat")
    names = tuple(type(policy).__name__ for policy in policies)
    state = Game(rules if rules is not None else RuleSet(), names).new_initial_state(seed, deal)
    for _ in range(MAX_DECISIONS):
        if state.is_terminal():
            return state
        p = state.current_player()
        observation, legal = state.observation(p), state.legal_actions()
        try:
            action = policies[p].act(observation, legal)
        except Exception as exc:  # noqa: BLE001 - the user's code: any exception, said in one line
            why = f"seat {p} ({names[p]}) raised {type(exc).__name__}: {exc} in act"
            raise DealError(deal_error_text(seed, deal, names, why)) from exc
        try:
            state.apply_action(action)
        except (ValueError, TypeError):
            raise DealError(deal_error_text(seed, deal, names, f"seat {p} ({names[p]}) returned an illegal action "
                                                             f"{action!r}")) from None
    if state.is_terminal():
        return state
    raise DealError(deal_error_text(seed, deal, names, max_decisions_text(MAX_DECISIONS)))
