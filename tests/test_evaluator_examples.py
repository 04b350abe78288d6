"""Hand-worked cases, checked against both the naive oracle (tests/naive.py) and the fast
numba evaluator (simkit.evaluator): every test runs once per implementation.

Every expected value below is worked by hand from the rules (docs/rules.md). The
reasoning is in the comment above each case. Abbreviations: "p" = pair (0),
子 plain 3 / fat 6, 闹 plain 9 / fat 18, 碰 plain 1 / fat 2, 楼 plain 6 / fat 12.
U = floor((hu + tol) * 2**L / 50) by default.

tests/test_naive_oracle.py checks the oracle itself against an even dumber brute force.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helpers import fast_evaluate  # noqa: E402
from naive import PATTERN_NAMES, TYPE_NAMES, XIAOJIA_PATTERNS, naive_evaluate, parse_cards  # noqa: E402


def T(name: str) -> int:
    return TYPE_NAMES.index(name)


IMPLEMENTATIONS = {"naive": naive_evaluate, "fast": fast_evaluate}
_current = {"impl": naive_evaluate}


@pytest.fixture(autouse=True, params=sorted(IMPLEMENTATIONS))
def implementation(request):
    """Run every hand-worked case once with each evaluator."""
    _current["impl"] = IMPLEMENTATIONS[request.param]
    yield request.param
    _current["impl"] = naive_evaluate


def ev(concealed: str, exposed=(), **rules):
    exp = [(kind, tuple(T(n) for n in names.split())) for kind, names in exposed]
    return _current["impl"](parse_cards(concealed), exp, rules)


def check(res, *, hu, units=None, patterns=frozenset(), lou=0, steps=0):
    assert res["complete"] is True
    assert res["min_idle"] == 0
    assert res["hu"] == hu
    assert res["lou"] == lou
    assert res["steps"] == steps
    assert res["patterns"] == frozenset(patterns)
    if units is not None:
        assert res["units"] == units
        assert res["wins"] == (units >= 1)


# ------------------------------------------------------------------ interface

def test_interface():
    assert len(TYPE_NAMES) == 28
    assert TYPE_NAMES[0] == "YJ" and TYPE_NAMES[7 + 6] == "RZ" and TYPE_NAMES[27] == "GZ"
    c = parse_cards("RJ*3 RS YZ")
    assert len(c) == 28 and c[T("RJ")] == 3 and c[T("RS")] == 1 and c[T("YZ")] == 1 and sum(c) == 5
    assert parse_cards("红将*3 红士 黄卒") == c
    assert len(PATTERN_NAMES) == 18 and len(set(PATTERN_NAMES)) == 18
    assert XIAOJIA_PATTERNS == frozenset(PATTERN_NAMES[14:])
    r = ev("RJ RS RX")
    assert set(r) == {"complete", "hu", "lou", "steps", "units", "wins", "patterns", "min_idle"}


# ------------------------------------------------------- docs/rules.md §9 examples

@pytest.mark.parametrize("hand,hu", [
    ("RJ RS RX", 1),            # 1. one 圆
    ("RJ*2 RS*2 RX*2", 10),     # 2. 素车 不出 10 > 2 圆
    ("RJ*3 RS*2 RX*2", 26),     # 3. 素车 一出 20 + 肥子 6
    ("RC*3 RM RP", 1),          # 4. 圆 + pair 车
    ("YZ*2 RZ*2 WZ*2", 20),     # 5. 肥车 不出 of 卒
    ("YZ RZ WZ GZ", 1),         # 6. 4-colour 卒 圆
    ("YS*3 RS*3 WS*3", 29),     # 7. 3 素子 9 + 三清 20
    ("RJ*3 RZ*3", 32),          # 8. 2 肥子 12 + 天地 20
    ("YJ RJ WJ", 3),            # 10. three single 将
])
def test_rules_examples(hand, hu):
    # None of these reach 48 hu and none has a pattern, so U = 0.
    check(ev(hand), hu=hu, units=0)


def test_rules_example_11_zhan_pair_is_no_component():
    # docs/rules.md §9 example 11: GC*2 GP*2 with exposed 占 GM. The 占 pair is no chariot
    # component by default: three pairs, 0 hu. With zhan_in_chariot it is: 素车 (GC p,
    # 占 GM, GP p) 不出 10. No pattern, U = 0.
    check(ev("GC*2 GP*2", [("zhan", "GM")]), hu=0, units=0)
    check(ev("GC*2 GP*2", [("zhan", "GM")], zhan_in_chariot=True), hu=10, units=0)


def test_rules_example_12_zhan_pair_in_fat_chariot():
    # docs/rules.md §9 example 12: RZ*3 WZ*3 with exposed 占 YZ. Default: two 肥子 12 (no 卒
    # 圆: two colours only), U = floor(14/50) = 0. zhan_in_chariot: 肥车 (占 YZ, RZ 子, WZ 子)
    # 两出 60 + 12 = 72; 肥车 with >= 2 出 is a pattern; U = floor(74/50) = 1.
    check(ev("RZ*3 WZ*3", [("zhan", "YZ")]), hu=12, units=0)
    check(ev("RZ*3 WZ*3", [("zhan", "YZ")], zhan_in_chariot=True), hu=72, units=1,
          patterns={"fat_chariot_2_out"})


def test_rules_example_13_single_jiang_cap():
    # docs/rules.md §9 example 13: four single 将 (no 圆, no component): 4; with
    # single_jiang_cap=3 only three score: 3. Other caps: min(4, cap).
    check(ev("YJ RJ WJ GJ"), hu=4, units=0)
    check(ev("YJ RJ WJ GJ", single_jiang_cap=3), hu=3, units=0)
    check(ev("YJ RJ WJ GJ", single_jiang_cap=1), hu=1, units=0)
    check(ev("YJ RJ WJ GJ", single_jiang_cap=4), hu=4, units=0)
    check(ev("YJ RJ WJ GJ", single_jiang_cap=16), hu=4, units=0)


def test_rules_example_9_incomplete():
    # 9. RM RP: no group holds 马+炮 without 车 -> both idle.
    r = ev("RM RP")
    assert r == {"complete": False, "hu": None, "lou": 0, "steps": 0, "units": 0,
                 "wins": False, "patterns": frozenset(), "min_idle": 2}


# ------------------------------------------------------------ chariot kinds

def test_plain_chariot_cmp_all_out():
    # 子 车 6 + 子 马 3 + 子 炮 3 = 12; 素车 3 出 (全踏) 40 -> 52.
    # (3 圆 = 3; pairs + 1 圆 = 1 + 素车 不出 10 = 11.) U = floor(54/50) = 1.
    check(ev("RC*3 RM*3 RP*3"), hu=52, units=1, patterns={"plain_chariot_all_out"})


def test_plain_chariot_two_out():
    # 子 将 6 + 子 士 3 + pair 相; 素车 2 出 30 -> 39.
    # (将 as pair + single: 1 + 3 + 素车 1 出 20 = 24.) A 素车 with 出 alone is
    # no pattern. U = floor(41/50) = 0, no win.
    check(ev("YJ*3 YS*3 YX*2"), hu=39, units=0)


def test_fat_chariot_two_out():
    # 子 YJ 6 + 子 RJ 6 + pair WJ; 肥车 2 出 60 -> 72. (WJ as 2 singles breaks
    # the 肥车: 14.) Pattern 肥车 with >= 2 出. U = floor(74/50) = 1.
    check(ev("YJ*3 RJ*3 WJ*2"), hu=72, units=1, patterns={"fat_chariot_2_out"})


def test_fat_chariot_all_out_soldiers():
    # 3 卒 子 18; 肥车 3 出 (全踏) 100 -> 118 (vs 3 卒 圆 = 3). U = floor(120/50) = 2.
    check(ev("YZ*3 RZ*3 WZ*3"), hu=118, units=2, patterns={"fat_chariot_2_out"})


def test_long_chariot_one_out_soldiers():
    # 子 YZ 6 + 3 pairs; 长车 1 出 80 -> 86. Every 3-colour 肥车 inside it has
    # <= 1 出, so only 长车 with >= 1 出. U = floor(88/50) = 1.
    check(ev("YZ*3 RZ*2 WZ*2 GZ*2"), hu=86, units=1, patterns={"long_chariot_1_out"})


def test_long_chariot_all_out_generals():
    # 4 子 将 24; 长车 4 出 (全踏) 200 -> 224 (12 singles = 12). U = floor(226/50) = 4.
    # A 肥车 of 3 of the 子 has 3 出 -> fat_chariot_2_out too.
    check(ev("YJ*3 RJ*3 WJ*3 GJ*3"), hu=224, units=4,
          patterns={"fat_chariot_2_out", "long_chariot_1_out"})


def test_long_chariot_no_out():
    # 4 将 pairs: 长车 不出 40 (8 singles 8; 肥车 20 + 2 singles 22). No pattern.
    check(ev("YJ*2 RJ*2 WJ*2 GJ*2"), hu=40, units=0)


def test_two_chariots_different_families():
    # 6 pairs: 素车 将士相 不出 10 + 素车 车马炮 不出 10 = 20 (4 圆 = 4).
    check(ev("RJ*2 RS*2 RX*2 RC*2 RM*2 RP*2"), hu=20, units=0)


def test_four_nao_of_generals():
    # Each 将 x4: 闹 18 beats 2 pairs / 子+single / pair+2 singles / 4 singles.
    # 4 闹 72 + 长车 全踏 200 = 272. (8 pairs -> 2 长车 不出 80.) U = floor(274/50) = 5.
    check(ev("YJ*4 RJ*4 WJ*4 GJ*4"), hu=272, units=5,
          patterns={"fat_chariot_2_out", "long_chariot_1_out"})


def test_same_type_in_two_chariots_option():
    # RJ x4 with pairs RS, RX, YJ, WJ. RJ 闹 18 + 肥车 (RJ闹, YJ p, WJ p) 1 出 40 = 58;
    # RJ as 2 pairs: 素车 不出 10 + 肥车 不出 20 = 30; 子+single 6+1+40 = 47;
    # 2 圆 (RJ RS RX) + 肥车 (RJ p, YJ p, WJ p) 20 = 22. Best 58.
    # With jiang_in_chariot the 肥车 with 1 出 also scores its 2 将 pairs: +4 -> 62.
    check(ev("RJ*4 RS*2 RX*2 YJ*2 WJ*2"), hu=58, units=1)
    check(ev("RJ*4 RS*2 RX*2 YJ*2 WJ*2", jiang_in_chariot=True), hu=62, units=1)


# -------------------------------------------------------------- 清 / 天地

def test_qing_two_ranks():
    # 7 素子 21; 士 in 4 colours 四清 40 (not 60); 相 in 3 colours 三清 20 -> 81.
    # Only 四清 is a pattern here. U = floor(83/50) = 1.
    check(ev("YS*3 RS*3 WS*3 GS*3 YX*3 RX*3 WX*3"), hu=81, units=1, patterns={"qing4"})


def test_tiandi_two_colours():
    # 子 YJ 6 + 子 YZ 6 + 闹 RJ 18 + 子 RZ 6 = 36; 天地 yellow + red 40 -> 76.
    # 天地 alone is no pattern. U = floor(78/50) = 1 by count.
    check(ev("YJ*3 YZ*3 RJ*4 RZ*3"), hu=76, units=1)


# -------------------------------------------------------------- 步 bonus

def test_five_steps_and_exposed_qing():
    # 5 plain 碰 5 + 步 bonus (s=5) 20 + 马 碰 in 4 colours 四清 40 + single YJ 1 = 66.
    # Patterns: 5 步 + 三清 (四清 counts as 三清), 四清.
    r = ev("YJ", [("peng", "YM"), ("peng", "RM"), ("peng", "WM"), ("peng", "GM"), ("peng", "YP")])
    check(r, hu=66, units=1, steps=5, patterns={"steps5_qing3", "qing4"})


def test_five_steps_alone_is_no_pattern():
    # 5 plain 碰 (no 清: 士 2 colours) 5 + bonus 20 = 25; U 0.
    r = ev("", [("peng", "YS"), ("peng", "RS"), ("peng", "YX"), ("peng", "WM"), ("peng", "GP")])
    check(r, hu=25, units=0, steps=5)


def test_six_steps_pattern_win():
    # 6 plain 碰 6 + bonus (s=6) 40 + single RJ 1 = 47; U = floor(49/50) = 0 but
    # 6 步 is a pattern win -> U 1. No 素车 (no YJ, no 车), 清 max 2 colours.
    exp = [("peng", n) for n in ("YS", "YX", "YM", "YP", "RS", "RX")]
    check(ev("RJ", exp), hu=47, units=1, steps=6, patterns={"steps6"})
    # pattern_wins off: count only -> U 0, patterns still reported.
    check(ev("RJ", exp, pattern_wins=False), hu=47, units=0, steps=6, patterns={"steps6"})


def test_eleven_steps():
    # 11 碰: 8 plain (YS YX YM YP RS RX RM RP) 8 + fat WC GC YZ 6 = 14;
    # bonus 20*(11-4) = 140 -> 154. No 素车 (no 将, no Y/R 车), 清 <= 2 colours,
    # 天地 needs YJ. U = floor(156/50) = 3. Empty hand is complete.
    exp = [("peng", n) for n in ("YS", "YX", "YM", "YP", "RS", "RX", "RM", "RP", "WC", "GC", "YZ")]
    check(ev("", exp), hu=154, units=3, steps=11, patterns={"steps6"})


def test_steps_count_lou_option():
    # 碰 YS RX WM GP (4) + 楼 YM (plain 6) = 10 hu. Default s=4: no bonus,
    # U = floor(12*2/50) = 0. steps_count_lou: s=5 -> +20 = 30, U = floor(64/50) = 1.
    # 马: W and Y only -> no 清; no chariot; 5 步 alone is no pattern.
    exp = [("peng", "YS"), ("peng", "RX"), ("peng", "WM"), ("peng", "GP"), ("kong", "YM")]
    check(ev("", exp), hu=10, units=0, lou=1, steps=4)
    check(ev("", exp, steps_count_lou=True), hu=30, units=1, lou=1, steps=5)


# -------------------------------------------------- 楼 doubling / tolerance

def test_lou_doubling_and_tolerance():
    # 楼 RC 12 + 子 YJ 6 + 子 YM 3 + RJ as 2 singles 2 = 23 (RJ pair would give 0,
    # no chariot possible: only 2 将 colours, no 素车 triad). L=1.
    # default: floor(25*2/50) = 1 wins ("with one 楼 23 hu wins").
    hand, exp = "YJ*3 YM*3 RJ*2", [("kong", "RC")]
    check(ev(hand, exp), hu=23, units=1, lou=1)
    check(ev(hand, exp, hu_tolerance=0), hu=23, units=0, lou=1)      # floor(46/50)
    check(ev(hand, exp, lou_doubles=False), hu=23, units=0, lou=1)   # floor(25/50)


def test_48_and_47_hu_without_lou():
    # 闹 YJ 18 + 闹 RJ 18 + 子 WC 6 + 子 GC 6 = 48 (only 2 将 colours, 车 2 colours).
    # default floor(50/50) = 1; hu_tolerance 0: floor(48/50) = 0.
    check(ev("YJ*4 RJ*4 WC*3 GC*3"), hu=48, units=1)
    check(ev("YJ*4 RJ*4 WC*3 GC*3", hu_tolerance=0), hu=48, units=0)
    # 闹 18 + 闹 18 + 子 WC 6 + 子 GS 3 + 圆 GC GM GP 1 + single WJ 1 = 47:
    # WJ alone cannot be a 肥车 component, GS x3 can only be a 子. floor(49/50) = 0.
    check(ev("YJ*4 RJ*4 WC*3 GS*3 GC GM GP WJ"), hu=47, units=0)


def test_two_lou_pattern_and_options():
    # 楼 YM + 楼 RM = 12 hu, L=2. default floor(14*4/50) = 1.
    # hu_tolerance 0: floor(48/50) = 0 -> two 楼 pattern -> 1; also pattern_wins off -> 0.
    exp = [("kong", "YM"), ("kong", "RM")]
    check(ev("", exp), hu=12, units=1, lou=2, patterns={"two_lou"})
    check(ev("", exp, hu_tolerance=0), hu=12, units=1, lou=2, patterns={"two_lou"})
    check(ev("", exp, hu_tolerance=0, pattern_wins=False), hu=12, units=0, lou=2,
          patterns={"two_lou"})


# ----------------------------------------------------------- pattern wins

def test_plain_chariot_fat_lou():
    # 楼 RJ 12 + 素车 (RJ 楼, RS p, RX p) 1 出 20 = 32; the fat 楼 is inside the 素车.
    # default floor(34*2/50) = 1; lou_doubles off floor(34/50) = 0 -> pattern -> 1.
    exp = [("kong", "RJ")]
    check(ev("RS*2 RX*2", exp), hu=32, units=1, lou=1, patterns={"plain_chariot_fat_lou"})
    check(ev("RS*2 RX*2", exp, lou_doubles=False), hu=32, units=1, lou=1,
          patterns={"plain_chariot_fat_lou"})
    check(ev("RS*2 RX*2", exp, lou_doubles=False, pattern_wins=False), hu=32, units=0,
          lou=1, patterns={"plain_chariot_fat_lou"})


def test_fat_chariot_plain_lou():
    # 楼 GM 6 + 肥车 不出 of 3 将 pairs 20 = 26 (6 singles: 12).
    # lou_doubles off: floor(28/50) = 0 -> pattern -> 1.
    check(ev("YJ*2 RJ*2 WJ*2", [("kong", "GM")], lou_doubles=False), hu=26, units=1, lou=1,
          patterns={"fat_chariot_plain_lou"})


def test_steps5_chariot_out():
    # 碰 RJ 2 + 碰 YM YP WS GX 4 = 6; 素车 (RJ 碰, RS p, RX p) 1 出 20; s=5 bonus 20
    # -> 46. No 清 (each rank 1 colour), no 天地. floor(48/50) = 0 -> pattern -> 1.
    exp = [("peng", n) for n in ("RJ", "YM", "YP", "WS", "GX")]
    check(ev("RS*2 RX*2", exp), hu=46, units=1, steps=5, patterns={"steps5_chariot_out"})


def test_steps5_qing3():
    # 碰 YS RS WS YM RP 5 + 三清 士 20 + bonus 20 = 45 -> pattern -> 1.
    exp = [("peng", n) for n in ("YS", "RS", "WS", "YM", "RP")]
    check(ev("", exp), hu=45, units=1, steps=5, patterns={"steps5_qing3"})


def test_steps5_tiandi():
    # 碰 YJ 2 + YZ 2 + RS WM GP 3 = 7 + 天地 yellow 20 + bonus 20 = 47 -> pattern -> 1.
    exp = [("peng", n) for n in ("YJ", "YZ", "RS", "WM", "GP")]
    check(ev("", exp), hu=47, units=1, steps=5, patterns={"steps5_tiandi"})


def test_qing3_tiandi():
    # 3 子 士 9 + 子 YJ 6 + 子 YZ 6 + 三清 20 + 天地 20 = 61 (no 相 -> no 素车).
    check(ev("YS*3 RS*3 WS*3 YJ*3 YZ*3"), hu=61, units=1, patterns={"qing3_tiandi"})


def test_qing3_chariot_out_and_jiang_in_chariot():
    # 3 子 士 9 + 三清 20 + 素车 (YJ p, YS 子, YX p) 1 出 20 = 49 (YJ as singles: 31).
    # U = floor(51/50) = 1. jiang_in_chariot: the 将 pair in a chariot with 出 -> +2 = 51.
    check(ev("YS*3 RS*3 WS*3 YJ*2 YX*2"), hu=49, units=1, patterns={"qing3_chariot_out"})
    check(ev("YS*3 RS*3 WS*3 YJ*2 YX*2", jiang_in_chariot=True), hu=51, units=1,
          patterns={"qing3_chariot_out"})


def test_chariot_out_tiandi():
    # 子 RJ 6 + 子 RZ 6 + 素车 (RJ 子, RS p, RX p) 1 出 20 + 天地 red 20 = 52.
    check(ev("RJ*3 RZ*3 RS*2 RX*2"), hu=52, units=1, patterns={"chariot_out_tiandi"})


# ------------------------------------------------------------ 小甲 patterns

def test_xiaojia_plain_chariot_all_out_two_lou():
    # 楼 RC 12 + 楼 RM 6 + 子 RP 3 + 素车 全踏 40 = 61, L=2.
    # default floor(63*4/50) = 5. lou_doubles off: floor(63/50) = 1 -> 小甲 -> 5;
    # then pattern_wins off too -> 1. Patterns: two 楼, 素车 + fat 楼 RC,
    # 素车全踏, 素车全踏 + two 楼.
    exp = [("kong", "RC"), ("kong", "RM")]
    pats = {"two_lou", "plain_chariot_fat_lou", "plain_chariot_all_out",
            "plain_chariot_all_out_two_lou"}
    check(ev("RP*3", exp), hu=61, units=5, lou=2, patterns=pats)
    check(ev("RP*3", exp, lou_doubles=False), hu=61, units=5, lou=2, patterns=pats)
    check(ev("RP*3", exp, lou_doubles=False, pattern_wins=False), hu=61, units=1, lou=2,
          patterns=pats)


def test_xiaojia_fat_chariot_out_two_lou():
    # 楼 YM + 楼 RM 12 + 子 YJ 6 + 肥车 (YJ 子, RJ p, WJ p) 1 出 40 = 58, L=2:
    # floor(60*4/50) = 4 -> 小甲 -> 5; pattern_wins off -> 4.
    exp = [("kong", "YM"), ("kong", "RM")]
    pats = {"two_lou", "fat_chariot_plain_lou", "fat_chariot_out_two_lou"}
    check(ev("YJ*3 RJ*2 WJ*2", exp), hu=58, units=5, lou=2, patterns=pats)
    check(ev("YJ*3 RJ*2 WJ*2", exp, pattern_wins=False), hu=58, units=4, lou=2, patterns=pats)


def test_xiaojia_long_chariot_2_out_lou():
    # 楼 YS 6 + 子 YZ 6 + 子 RZ 6 + 长车 2 出 120 = 138, L=1.
    # default floor(140*2/50) = 5; lou_doubles off floor(140/50) = 2 -> 小甲 -> 5.
    # Patterns: 长车 >=1 出, 肥车 (YZ, RZ, + a pair) 2 出, 肥车 + plain 楼, 长车 2 出 + 楼.
    exp = [("kong", "YS")]
    pats = {"long_chariot_1_out", "fat_chariot_2_out", "fat_chariot_plain_lou",
            "long_chariot_2_out_lou"}
    check(ev("YZ*3 RZ*3 WZ*2 GZ*2", exp), hu=138, units=5, lou=1, patterns=pats)
    check(ev("YZ*3 RZ*3 WZ*2 GZ*2", exp, lou_doubles=False), hu=138, units=5, lou=1,
          patterns=pats)


def test_xiaojia_steps6_long_chariot():
    # 6 plain 碰 (YS RX WM GP YM RP) 6 + bonus 40 + 长车 不出 of 将 pairs 40 = 86.
    # No 素车 (Y has no 相/车, R no 士), no 清 (马 W,Y; 炮 G,R).
    # floor(88/50) = 1 -> 6 步 + 长车 -> 5.
    exp = [("peng", n) for n in ("YS", "RX", "WM", "GP", "YM", "RP")]
    check(ev("YJ*2 RJ*2 WJ*2 GJ*2", exp), hu=86, units=5, steps=6,
          patterns={"steps6", "steps6_long_chariot"})


# -------------------------------------------------------- jiang_in_chariot

def test_jiang_in_chariot_variants():
    # 子 RS 3 + 素车 (RJ p, RS 子, RX p) 1 出 20 = 23; option: + 将 pair 2 = 25.
    check(ev("RJ*2 RS*3 RX*2"), hu=23)
    check(ev("RJ*2 RS*3 RX*2", jiang_in_chariot=True), hu=25)
    # 子 GJ 6 + 长车 1 出 80 = 86; option: three 将 pairs inside +6 = 92.
    check(ev("YJ*2 RJ*2 WJ*2 GJ*3"), hu=86, units=1, patterns={"long_chariot_1_out"})
    check(ev("YJ*2 RJ*2 WJ*2 GJ*3", jiang_in_chariot=True), hu=92, units=1,
          patterns={"long_chariot_1_out"})
    # 肥车 不出: the option needs >= 1 出, so still 20.
    check(ev("YJ*2 RJ*2 WJ*2", jiang_in_chariot=True), hu=20)
    # (占 将 pairs: see test_zhan_of_jiang_with_and_without_jiang_in_chariot)


# ---------------------------------------------------------- zhan_in_chariot (docs/rules.md §2, §8)

def test_zhan_of_jiang_with_and_without_jiang_in_chariot():
    # exposed 占 RJ (0) + 子 RS 3 + 子 RX 3. RS x3 / RX x3 can only be 子 (no 将 left for a 圆).
    # Default: the 占 pair is no component -> no 素车: 6, also with jiang_in_chariot (no
    # chariot holds a 将). zhan_in_chariot: 素车 (占 RJ, RS 子, RX 子) 2 出 30 -> 36; with
    # jiang_in_chariot too the 占 将 pair in that chariot scores 1 per 将: +2 -> 38.
    # No pattern (a 素车 with 出 alone is none); U = 0 throughout (38 + 2 < 50).
    exp = [("zhan", "RJ")]
    check(ev("RS*3 RX*3", exp), hu=6, units=0)
    check(ev("RS*3 RX*3", exp, jiang_in_chariot=True), hu=6, units=0)
    check(ev("RS*3 RX*3", exp, zhan_in_chariot=True), hu=36, units=0)
    check(ev("RS*3 RX*3", exp, zhan_in_chariot=True, jiang_in_chariot=True), hu=38, units=0)


def test_zhan_of_jiang_completes_long_chariot():
    # YJ*3 RJ*2 WJ*2 with exposed 占 GJ. Default: 子 YJ 6 + 肥车 (YJ 子, RJ p, WJ p) 1 出 40
    # = 46 (YJ as pair + single: 1 + 肥车 不出 20 = 21); U = floor(48/50) = 0.
    # jiang_in_chariot: the 肥车 has 1 出, its 2 将 pairs score 1 per 将: +4 -> 50, U = 1.
    # zhan_in_chariot: 长车 (占 GJ, YJ 子, RJ p, WJ p) 1 出 80 + 6 = 86 (> 肥车 46); 长车 with
    # >= 1 出 is a pattern; U = floor(88/50) = 1. Both options: 3 将 pairs (占 GJ among them)
    # +6 -> 92, U = 1.
    exp = [("zhan", "GJ")]
    check(ev("YJ*3 RJ*2 WJ*2", exp), hu=46, units=0)
    check(ev("YJ*3 RJ*2 WJ*2", exp, jiang_in_chariot=True), hu=50, units=1)
    check(ev("YJ*3 RJ*2 WJ*2", exp, zhan_in_chariot=True), hu=86, units=1,
          patterns={"long_chariot_1_out"})
    check(ev("YJ*3 RJ*2 WJ*2", exp, zhan_in_chariot=True, jiang_in_chariot=True), hu=92,
          units=1, patterns={"long_chariot_1_out"})


def test_fat_chariot_of_soldiers_needs_the_zhan_pair():
    # RZ*2 WZ*2 with exposed 占 YZ: no 卒 圆 (two colours in hand). Default: two pairs 0.
    # zhan_in_chariot: 肥车 (占 YZ, RZ p, WZ p) 不出 20.
    check(ev("RZ*2 WZ*2", [("zhan", "YZ")]), hu=0, units=0)
    check(ev("RZ*2 WZ*2", [("zhan", "YZ")], zhan_in_chariot=True), hu=20, units=0)
    # With a plain 楼 YM (6, L=1): default 6, U = floor(8*2/50) = 0. zhan_in_chariot:
    # 6 + 肥车 20 = 26, U = floor(28*2/50) = 1, pattern 肥车 + plain 楼.
    exp = [("zhan", "YZ"), ("kong", "YM")]
    check(ev("RZ*2 WZ*2", exp), hu=6, units=0, lou=1)
    check(ev("RZ*2 WZ*2", exp, zhan_in_chariot=True), hu=26, units=1, lou=1,
          patterns={"fat_chariot_plain_lou"})
    # RZ*3 WZ*2 GZ*2 with 占 YZ (卒 圆s would leave idle 卒): default 子 RZ 6 + 肥车 (RZ 子,
    # WZ p, GZ p) 1 出 40 = 46, no pattern, U = floor(48/50) = 0. zhan_in_chariot: 长车
    # (占 YZ, RZ 子, WZ p, GZ p) 1 出 80 + 6 = 86, pattern 长车 >= 1 出, U = 1.
    check(ev("RZ*3 WZ*2 GZ*2", [("zhan", "YZ")]), hu=46, units=0)
    check(ev("RZ*3 WZ*2 GZ*2", [("zhan", "YZ")], zhan_in_chariot=True), hu=86, units=1,
          patterns={"long_chariot_1_out"})


def test_zhan_pair_with_a_concealed_pair_of_the_same_type():
    # RJ*2 YJ*2 WJ*2 RS*2 RX*2 with exposed 占 RJ (all four RJ held).
    # Default: components RJ p (hand), YJ p, WJ p, RS p, RX p; the hand RJ pair serves one
    # chariot: 肥车 (YJ, RJ, WJ) 不出 20 (or 素车 (RJ, RS, RX) 10 + YJ, WJ singles 4 = 14;
    # 2 圆 RJ RS RX 2 + 4 singles = 6) -> 20.
    # zhan_in_chariot: RJ has two components (占 pair + hand pair): 素车 (RJ, RS, RX) 10 +
    # 肥车 (YJ, RJ, WJ) 20 = 30 (no 长车: no GJ). No 出, so jiang_in_chariot adds nothing.
    hand, exp = "RJ*2 YJ*2 WJ*2 RS*2 RX*2", [("zhan", "RJ")]
    check(ev(hand, exp), hu=20, units=0)
    check(ev(hand, exp, zhan_in_chariot=True), hu=30, units=0)
    check(ev(hand, exp, zhan_in_chariot=True, jiang_in_chariot=True), hu=30, units=0)


def test_zhan_pair_is_never_out():
    # 占 YJ + YZ*3 RJ*3 RZ*3: three 肥子 18 + 天地 red (RJ 子, RZ 子) 20 = 38. The 占 YJ pair
    # is no 出, so no yellow 天地, whatever zhan_in_chariot says; with it on, the 将
    # components are 占 YJ and RJ 子 (two colours) and the 卒 ones YZ, RZ: no chariot.
    exp = [("zhan", "YJ")]
    check(ev("YZ*3 RJ*3 RZ*3", exp), hu=38, units=0)
    check(ev("YZ*3 RJ*3 RZ*3", exp, zhan_in_chariot=True), hu=38, units=0)


# -------------------------------------------------------- single_jiang_cap (docs/rules.md §2, §8)

def test_cap_counts_table_and_concealed_singles_together():
    # Table 将 YJ, RJ (1 each) + concealed WJ GJ GS GX: GS, GX (one each) fit only in the
    # 圆 GJ GS GX (1), WJ is a single. Singles: 2 on the table + WJ = 3.
    # no cap: 1 + 3 = 4; cap 3: 4; cap 2: 1 + 2 = 3; cap 1: 1 + 1 = 2.
    exp = [("table", "YJ"), ("table", "RJ")]
    check(ev("WJ GJ GS GX", exp), hu=4, units=0)
    check(ev("WJ GJ GS GX", exp, single_jiang_cap=3), hu=4, units=0)
    check(ev("WJ GJ GS GX", exp, single_jiang_cap=2), hu=3, units=0)
    check(ev("WJ GJ GS GX", exp, single_jiang_cap=1), hu=2, units=0)
    # Only table 将: four singles, min(4, cap).
    table4 = [("table", "YJ"), ("table", "RJ"), ("table", "WJ"), ("table", "GJ")]
    check(ev("", table4), hu=4, units=0)
    check(ev("", table4, single_jiang_cap=2), hu=2, units=0)


def test_cap_makes_the_pair_as_good_as_singles():
    # YJ*3 YS YX + table 将 RJ, WJ. YS, YX (one each) need the 圆 YJ YS YX (1); the two
    # other YJ are a pair (0) or two singles (2).
    # no cap: 1 + 2 singles + 2 table = 5.
    # cap 2: the 2 table 将 fill the cap: pair 1 + 2 = 3 = singles 1 + min(4, 2) = 3 -> 3.
    # cap 3: pair 1 + min(2, 3) = 3 < singles 1 + min(4, 3) = 4 -> 4.
    exp = [("table", "RJ"), ("table", "WJ")]
    check(ev("YJ*3 YS YX", exp), hu=5, units=0)
    check(ev("YJ*3 YS YX", exp, single_jiang_cap=2), hu=3, units=0)
    check(ev("YJ*3 YS YX", exp, single_jiang_cap=3), hu=4, units=0)
    # YJ*2 RJ*2 WJ*2 GJ + table 将 YJ, RJ, WJ: 肥车 (YJ, RJ, WJ pairs) 不出 20 + singles GJ +
    # 3 table = 24 (the pairs as six singles: 6 + 4 = 10; GJ alone is no component).
    # cap 1: 20 + 1 = 21 (all singles: min(10, 1) = 1).
    exp = [("table", "YJ"), ("table", "RJ"), ("table", "WJ")]
    check(ev("YJ*2 RJ*2 WJ*2 GJ", exp), hu=24, units=0)
    check(ev("YJ*2 RJ*2 WJ*2 GJ", exp, single_jiang_cap=1), hu=21, units=0)


def test_cap_with_jiang_in_chariot():
    # YJ*2 YS*3 YX*2 + table 将 RJ, WJ, GJ. The hand: 素车 (YJ p, YS 子, YX p) 1 出 20 + 子 YS
    # 3 = 23 (YJ as 2 singles: 2 + 3 = 5; no 圆 fits: it would leave a lone 士 or 相).
    # jiang_in_chariot: the YJ pair in a chariot with 出: +2, not a single, never capped.
    # no cap: 23 + 3 = 26, with the option 28. cap 1: 23 + 1 = 24, with the option 26.
    # cap 3: 26 / 28. No pattern, U = 0 (28 + 2 < 50).
    exp = [("table", "RJ"), ("table", "WJ"), ("table", "GJ")]
    check(ev("YJ*2 YS*3 YX*2", exp), hu=26, units=0)
    check(ev("YJ*2 YS*3 YX*2", exp, jiang_in_chariot=True), hu=28, units=0)
    check(ev("YJ*2 YS*3 YX*2", exp, single_jiang_cap=1), hu=24, units=0)
    check(ev("YJ*2 YS*3 YX*2", exp, single_jiang_cap=1, jiang_in_chariot=True), hu=26, units=0)
    check(ev("YJ*2 YS*3 YX*2", exp, single_jiang_cap=3, jiang_in_chariot=True), hu=28, units=0)


def test_cap_can_cost_the_win():
    # YJ*3 RJ*2 WJ*2 GJ + table 将 GJ: 子 YJ 6 + 肥车 (YJ 子, RJ p, WJ p) 1 出 40 + singles
    # GJ (hand) and GJ (table) 2 = 48 -> U = floor(50/50) = 1 (YJ as pair + single: 21 + 3).
    # cap 1: 47 -> U = floor(49/50) = 0, no pattern (肥车 with 1 出 is none): no win.
    # cap 1 + jiang_in_chariot: the two 将 pairs of the 肥车 with 出 +4 -> 51, U = 1.
    exp = [("table", "GJ")]
    check(ev("YJ*3 RJ*2 WJ*2 GJ", exp), hu=48, units=1)
    check(ev("YJ*3 RJ*2 WJ*2 GJ", exp, single_jiang_cap=1), hu=47, units=0)
    check(ev("YJ*3 RJ*2 WJ*2 GJ", exp, single_jiang_cap=1, jiang_in_chariot=True), hu=51, units=1)


def test_cap_and_zhan_together():
    # 占 YJ + concealed YJ*2 RJ WJ GJ, table 将 RJ. The 占 pair is no component by default:
    # hand YJ pair 0 or two singles; singles: RJ, WJ, GJ (hand) + RJ (table).
    # no options: YJ singles: 2 + 3 + 1 = 6. cap 2: 2 (any reading: a pair leaves 4 singles).
    # zhan_in_chariot: the YJ 占 pair + the hand YJ pair give YJ two components, but no other
    # colour has a 将 component: no chariot; still 6 / cap 2: 2.
    exp = [("zhan", "YJ"), ("table", "RJ")]
    check(ev("YJ*2 RJ WJ GJ", exp), hu=6, units=0)
    check(ev("YJ*2 RJ WJ GJ", exp, single_jiang_cap=2), hu=2, units=0)
    check(ev("YJ*2 RJ WJ GJ", exp, zhan_in_chariot=True, single_jiang_cap=2), hu=2, units=0)


# -------------------------------------------------- exposed 1-hu groups

def test_exposed_chow_and_table():
    # exposed 圆 将士相 1 + exposed 4-colour 卒 圆 1 + table 将 YJ 1 + single WJ 1 = 4.
    exp = [("chow", "RJ RS RX"), ("chow", "YZ RZ WZ GZ"), ("table", "YJ")]
    check(ev("WJ", exp), hu=4, units=0)


# ------------------------------------------------ incomplete / min_idle

@pytest.mark.parametrize("hand,idle", [
    ("RC*3 RM RP YS", 1),   # 圆 + pair 车 leaves YS alone
    ("YJ YS", 1),           # YJ single, YS idle (将 never idle)
    ("YZ RZ", 2),           # 卒 圆 needs 3 colours
    ("YS*2 YM", 1),         # pair 士 + idle 马
    ("RJ*3 RM", 1),         # 将 fine in any way, 马 idle
    ("RC RM RP RC RM", 1),  # pair 车 + pair 马, 炮 idle (圆 first leaves 2 idle)
])
def test_incomplete_min_idle(hand, idle):
    r = ev(hand)
    assert r["complete"] is False and r["hu"] is None and r["units"] == 0
    assert r["wins"] is False and r["patterns"] == frozenset()
    assert r["min_idle"] == idle


def test_incomplete_with_two_lou():
    # Exposed groups cannot rescue an idle concealed card: incomplete, no pattern.
    r = ev("GS", [("kong", "YM"), ("kong", "RM")])
    assert r == {"complete": False, "hu": None, "lou": 2, "steps": 0, "units": 0,
                 "wins": False, "patterns": frozenset(), "min_idle": 1}


def test_soldier_sets_split():
    # YZ RZ WZ*2 GZ*2: two 3-colour sets (Y W G) + (R W G) = 2. (A 4-set leaves
    # W, G idle; two pairs leave Y, R idle.)
    check(ev("YZ RZ WZ*2 GZ*2"), hu=2)
