"""Names of the pattern wins and 小甲 patterns of docs/rules.md §6 (bit ``i`` = ``PATTERN_NAMES[i]``)."""

from __future__ import annotations

PATTERN_NAMES: tuple[str, ...] = (
    "two_lou",  # 两楼
    "plain_chariot_fat_lou",  # 素车 + 肥楼
    "fat_chariot_plain_lou",  # 肥车 + 素楼
    "fat_chariot_2_out",  # 肥车两出
    "long_chariot_1_out",  # 长车出车
    "steps5_chariot_out",  # 五步 + 出车
    "steps5_qing3",  # 五步 + 三清
    "steps5_tiandi",  # 五步 + 天地
    "qing3_tiandi",  # 三清 + 天地
    "qing3_chariot_out",  # 三清 + 出车
    "chariot_out_tiandi",  # 出车 + 天地
    "plain_chariot_all_out",  # 素车全踏
    "qing4",  # 四清
    "steps6",  # 六步
    "plain_chariot_all_out_two_lou",  # 小甲: 素车全踏上两楼
    "fat_chariot_out_two_lou",  # 小甲: 肥车出车上两楼
    "long_chariot_2_out_lou",  # 小甲: 长车出两出上一楼
    "steps6_long_chariot",  # 小甲: 六步踏长车
)
XIAOJIA_PATTERNS: frozenset[str] = frozenset(PATTERN_NAMES[14:])
PATTERN_CHINESE: dict[str, str] = {
    "two_lou": "两楼",
    "plain_chariot_fat_lou": "素车上肥楼",
    "fat_chariot_plain_lou": "肥车上素楼",
    "fat_chariot_2_out": "肥车两出",
    "long_chariot_1_out": "长车出车",
    "steps5_chariot_out": "五步出车",
    "steps5_qing3": "三清五步",
    "steps5_tiandi": "天地五步",
    "qing3_tiandi": "三清天地",
    "qing3_chariot_out": "三清出车",
    "chariot_out_tiandi": "出车天地",
    "plain_chariot_all_out": "素车全踏",
    "qing4": "四清",
    "steps6": "六步",
    "plain_chariot_all_out_two_lou": "素车全踏上两楼",
    "fat_chariot_out_two_lou": "肥车出车上两楼",
    "long_chariot_2_out_lou": "长车出两出上一楼",
    "steps6_long_chariot": "六步踏长车",
}


def pattern_names(mask: int) -> tuple[str, ...]:
    """Names of the bits set in a pattern mask, in RULES order.

    >>> pattern_names(0b1000000000001)
    ('two_lou', 'qing4')
    """
    return tuple(name for i, name in enumerate(PATTERN_NAMES) if (int(mask) >> i) & 1)
