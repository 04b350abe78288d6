"""The rule set: every option of docs/rules.md §8 as one frozen, hashable value.

>>> rules = RuleSet()
>>> rules.lou_doubles, rules.hu_tolerance
(True, 2)
>>> RuleSet.from_strings(["hu_tolerance=0", "pattern_wins=off"]).pattern_wins
False
>>> RuleSet.from_json(RuleSet(tianhu=False).to_json()) == RuleSet(tianhu=False)
True
"""

from __future__ import annotations

import dataclasses
import enum
import json
import tomllib
from typing import Any, Iterable, Mapping

import numpy as np

from simkit.errors import RuleError, loads_json


class DrawnCardChowBy(str, enum.Enum):
    """Who may 吃/占 a drawn card nobody 碰s (option ``drawn_card_chow_by``)."""

    DRAWER = "drawer"
    DRAWER_THEN_NEXT = "drawer_then_next"


class NextDealer(str, enum.Enum):
    """Who deals the next deal (option ``next_dealer``)."""

    WINNER_ELSE_NEXT = "winner_else_next"  # winner deals; after 穿牌 the next seat deals
    WINNER_ELSE_SAME = "winner_else_same"  # winner deals; after 穿牌 the dealer keeps the deal


_TRUE = {"1", "true", "on", "yes"}
_FALSE = {"0", "false", "off", "no"}

# Index of each option in the int64 array handed to numba kernels.
RULE_LOU_DOUBLES = 0
RULE_HU_TOLERANCE = 1
RULE_JIANG_IN_CHARIOT = 2
RULE_PATTERN_WINS = 3
RULE_STEPS_COUNT_LOU = 4
RULE_DRAWN_CARD_CHOW_BY = 5
RULE_PASS_LOCKS_TYPE = 6
RULE_MUST_KONG = 7
RULE_MUST_CHARIOT_OUT = 8
RULE_TIANHU = 9
RULE_NEXT_DEALER = 10
RULE_ZHAN_IN_CHARIOT = 11
RULE_SINGLE_JIANG_CAP = 12
RULE_DRAWN_JIANG_CHOW = 13
RULE_PASS_LOCKS_WIN = 14
N_RULE_FIELDS = 15


@dataclasses.dataclass(frozen=True)
class RuleSet:
    """Immutable rule options (docs/rules.md §8); the defaults are the project's default reading.

    Attributes:
        lou_doubles: each 楼 doubles the hu (the winning threshold halves); off: 楼 only scores 6/12.
        hu_tolerance: hu forgiven below a multiple of 50 (2 by default, 48 hu wins).
        jiang_in_chariot: once a chariot holding 将 has >= 1 出, each 将 of its pair components
            scores 1 (seed: 将或将士相出车后，将可算胡).  Off by default.
        pattern_wins: the pattern wins and 小甲 patterns of §6 raise the units.
        steps_count_lou: a 楼 also counts as a 步.
        drawn_card_chow_by: who may 吃/占 a drawn card.
        pass_locks_type: a passed claim locks the card type for the rest of the deal.
        must_kong: declining a legal 发子 forbids winning.
        must_chariot_out: declining a 碰 through a chariot forbids winning.
        tianhu: the dealer may win on the dealt 31 cards.
        next_dealer: who deals the next deal of a session (winner; after 穿牌 the next seat or
            the same dealer).
        zhan_in_chariot: a 占 pair is a chariot component (and counts towards "a chariot
            through t").  Off by default (seed: 占牌不算胡).
        single_jiang_cap: at most this many single 将 (concealed singles and table 将
            together) score 1 hu each; 0 = no cap (seed: 不超过三个的将每个一胡 -> 3).
        drawn_jiang_chow: the drawer may 吃/占 a drawn 将; off: a drawn 将 nobody 碰s or 发子s
            always goes to the table.
        pass_locks_win: a player who passed a legal claim on type t may not win in a discard
            phase reached through a card of type t (seed: 过了的牌也不能赢).
    """

    lou_doubles: bool = True
    hu_tolerance: int = 2
    jiang_in_chariot: bool = False
    pattern_wins: bool = True
    steps_count_lou: bool = False
    drawn_card_chow_by: DrawnCardChowBy = DrawnCardChowBy.DRAWER
    pass_locks_type: bool = True
    must_kong: bool = True
    must_chariot_out: bool = True
    tianhu: bool = True
    next_dealer: NextDealer = NextDealer.WINNER_ELSE_NEXT
    zhan_in_chariot: bool = False
    single_jiang_cap: int = 0
    drawn_jiang_chow: bool = True
    pass_locks_win: bool = True

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            object.__setattr__(self, field.name, _coerce(field.name, value))

    # -- conversions ---------------------------------------------------------
    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """Names of all options in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-compatible mapping of every option."""
        out: dict[str, Any] = {}
        for name in self.option_names():
            value = getattr(self, name)
            out[name] = value.value if isinstance(value, enum.Enum) else value
        return out

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any]) -> "RuleSet":
        """Build from a mapping; unknown keys raise :class:`RuleError`."""
        if not isinstance(mapping, Mapping):
            raise RuleError(f"rules must be a mapping of option names, got {type(mapping).__name__}")
        unknown = sorted(set(mapping) - set(cls.option_names()))
        if unknown:
            raise RuleError(
                f"unknown rule option {unknown[0]!r} (known: {', '.join(cls.option_names())})"
            )
        return cls(**dict(mapping))

    def to_json(self) -> str:
        """Canonical JSON text (sorted keys)."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "RuleSet":
        """Parse :meth:`to_json` output (or any JSON object of options)."""
        try:
            data = loads_json(text)
        except json.JSONDecodeError as exc:
            raise RuleError(f"rules JSON is malformed: {exc.msg} at line {exc.lineno}") from None
        return cls.from_dict(data)

    def to_toml(self) -> str:
        """TOML text, one ``key = value`` line per option."""
        lines = []
        for name, value in self.to_dict().items():
            if isinstance(value, bool):
                lines.append(f"{name} = {'true' if value else 'false'}")
            elif isinstance(value, int):
                lines.append(f"{name} = {value}")
            else:
                lines.append(f'{name} = "{value}"')
        return "\n".join(lines) + "\n"

    @classmethod
    def from_toml(cls, text: str) -> "RuleSet":
        """Parse TOML text; a ``[rules]`` table is used when present."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RuleError(f"rules TOML is malformed: {exc}") from None
        if "rules" in data and isinstance(data["rules"], dict):
            data = data["rules"]
        return cls.from_dict(data)

    def to_strings(self) -> list[str]:
        """``key=value`` strings of the options that differ from the default."""
        default = RuleSet().to_dict()
        out = []
        for name, value in self.to_dict().items():
            if value != default[name]:
                text = ("on" if value else "off") if isinstance(value, bool) else str(value)
                out.append(f"{name}={text}")
        return out

    @classmethod
    def from_strings(cls, items: Iterable[str], base: "RuleSet | None" = None) -> "RuleSet":
        """Apply ``key=value`` strings (as given to ``--rule``) on top of ``base``."""
        values = (base or cls()).to_dict()
        for item in items:
            if "=" not in item:
                raise RuleError(f"rule {item!r} is not of the form key=value")
            key, _, raw = item.partition("=")
            key = key.strip()
            if key not in values:
                raise RuleError(
                    f"unknown rule option {key!r} (known: {', '.join(cls.option_names())})"
                )
            values[key] = raw.strip()
        return cls(**values)

    def replace(self, **changes: Any) -> "RuleSet":
        """A copy with some options changed."""
        return dataclasses.replace(self, **changes)

    def to_array(self) -> np.ndarray:
        """The int64 option array read by numba kernels (``RULE_*`` indices)."""
        arr = np.zeros(N_RULE_FIELDS, dtype=np.int64)
        arr[RULE_LOU_DOUBLES] = int(self.lou_doubles)
        arr[RULE_HU_TOLERANCE] = self.hu_tolerance
        arr[RULE_JIANG_IN_CHARIOT] = int(self.jiang_in_chariot)
        arr[RULE_PATTERN_WINS] = int(self.pattern_wins)
        arr[RULE_STEPS_COUNT_LOU] = int(self.steps_count_lou)
        arr[RULE_DRAWN_CARD_CHOW_BY] = list(DrawnCardChowBy).index(self.drawn_card_chow_by)
        arr[RULE_PASS_LOCKS_TYPE] = int(self.pass_locks_type)
        arr[RULE_MUST_KONG] = int(self.must_kong)
        arr[RULE_MUST_CHARIOT_OUT] = int(self.must_chariot_out)
        arr[RULE_TIANHU] = int(self.tianhu)
        arr[RULE_NEXT_DEALER] = list(NextDealer).index(self.next_dealer)
        arr[RULE_ZHAN_IN_CHARIOT] = int(self.zhan_in_chariot)
        arr[RULE_SINGLE_JIANG_CAP] = self.single_jiang_cap
        arr[RULE_DRAWN_JIANG_CHOW] = int(self.drawn_jiang_chow)
        arr[RULE_PASS_LOCKS_WIN] = int(self.pass_locks_win)
        return arr


_FIELD_TYPES = {
    "lou_doubles": bool,
    "hu_tolerance": int,
    "jiang_in_chariot": bool,
    "pattern_wins": bool,
    "steps_count_lou": bool,
    "drawn_card_chow_by": DrawnCardChowBy,
    "pass_locks_type": bool,
    "must_kong": bool,
    "must_chariot_out": bool,
    "tianhu": bool,
    "next_dealer": NextDealer,
    "zhan_in_chariot": bool,
    "single_jiang_cap": int,
    "drawn_jiang_chow": bool,
    "pass_locks_win": bool,
}

# inclusive ranges of the integer options
_INT_RANGES = {"hu_tolerance": (0, 49), "single_jiang_cap": (0, 16)}

# every option: (what the default means, the other reading, the seed words it stands for);
# printed by ``simkit rules`` and documented in docs/rules.md §8
OPTION_DOCS: dict[str, tuple[str, str, str]] = {
    "lou_doubles": ("each 楼 doubles the hu (the threshold halves)", "off: a 楼 only scores its 6/12",
                    "上一楼23胡 (一牌); 250胡，上一楼123胡。上两楼61胡。上三楼31胡 (小甲)"),
    "hu_tolerance": ("2: 48 hu win", "0..49 hu forgiven (0: a strict 50)", "最小胡数为50胡，但可以少2胡"),
    "jiang_in_chariot": ("off: a 将 pair inside a chariot scores 0", "on: once such a chariot has >= 1 出, each 将 of its pairs scores 1",
                         "将或将士相出车后，将可算胡"),
    "pattern_wins": ("on: pattern wins and 小甲 patterns raise the units", "off: count only", "不数胡可以赢牌; the 一牌 and 小甲 lists"),
    "steps_count_lou": ("off: a 楼 is not a 步", "on: a 楼 counts as a 步", "碰（俗称“步”）"),
    "drawn_card_chow_by": ("drawer: only the drawer may 吃/占 a drawn card", "drawer_then_next: then the drawer's next player",
                           "起牌人可能根据自己手中的牌，对所起的牌进行“吃”“嗲/占”"),
    "pass_locks_type": ("on: a passed type cannot be claimed again", "off: passing locks no claim",
                        "过了的牌也不能再用，就像第一张我没吃，第二张就不能吃了"),
    "must_kong": ("on: declining a legal 发子 forbids winning", "off", "如果有子不发不能赢"),
    "must_chariot_out": ("on: declining a 碰 through a chariot forbids winning", "off", "有车子不出车也不能赢"),
    "tianhu": ("on: the dealer may win on the dealt 31", "off", "(not stated; 发牌后由庄家出牌一张)"),
    "next_dealer": ("winner_else_next: the winner deals next, after 穿牌 the next seat", "winner_else_same: the dealer keeps the deal after 穿牌",
                    "穿牌了，过头进行下一轮游戏"),
    "zhan_in_chariot": ("off: a 占 pair is never a chariot component", "on: a 占 pair is a component like a hand pair",
                        "占牌不算胡; 车 … 在手中必须有两张以上"),
    "single_jiang_cap": ("0: every single 将 scores 1", "k: at most k single 将 (concealed and table) score", "在参赛者手中的不超过三个的“将”每个一“胡” (k = 3)"),
    "drawn_jiang_chow": ("on: the drawer may 吃/占 a drawn 将", "off: a drawn 将 nobody 碰s or 发子s goes to the table",
                         "如果“将”没人“碰”不“发子”应将“将”明牌于牌桌上"),
    "pass_locks_win": ("on: a passed type cannot bring a win", "off", "过了的牌也不能赢"),
}


def _coerce(name: str, value: Any) -> Any:
    kind = _FIELD_TYPES[name]
    if kind is bool:
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise RuleError(f"rule option {name} must be on/off (true/false), got {value!r}")
    if kind is int:
        if isinstance(value, str):
            try:
                value = int(value.strip())
            except ValueError:
                raise RuleError(f"rule option {name} must be an integer, got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise RuleError(f"rule option {name} must be an integer, got {value!r}")
        low, high = _INT_RANGES[name]
        if not low <= int(value) <= high:
            raise RuleError(f"rule option {name} must lie in {low}..{high}, got {value}")
        return int(value)
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(m.value for m in kind)
        raise RuleError(f"rule option {name} must be one of {choices}, got {value!r}") from None
