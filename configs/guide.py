"""The guide the wizard's rules check, cited by section number AND title, since a reader may not have it open."""

from __future__ import annotations

import re

GUIDE_TITLE = "本地部署PyTorch硬件配置全解析：从入门到高性能的选型指南 (local PyTorch hardware guide)"

# Section number -> (title as the guide prints it, a short English gloss).
SECTION_TITLES: dict[str, tuple[str, str]] = {
    "1": ("CPU选型", "choosing a CPU"),
    "1.1": ("基础要求与推荐配置", "CPU basics"),
    "1.2": ("场景化选型建议", "CPU by scenario"),
    "1.3": ("代码示例：CPU性能测试", "CPU benchmark"),
    "2": ("GPU选型", "choosing a GPU"),
    "2.1": ("显存需求与模型规模", "GPU memory vs model size"),
    "2.2": ("算力与架构选择", "compute and architecture"),
    "2.3": ("场景化选型建议", "GPU by scenario"),
    "3": ("内存与存储", "RAM and storage"),
    "3.1": ("内存配置原则", "RAM"),
    "3.2": ("存储方案对比", "storage"),
    "4": ("散热与电源", "cooling and power"),
    "4.1": ("散热设计要点", "cooling"),
    "4.2": ("电源功率计算", "PSU sizing"),
    "5": ("兼容性与扩展性", "compatibility"),
    "5.1": ("硬件兼容性检查", "compatibility checks"),
    "5.2": ("扩展性设计", "expandability"),
    "6": ("成本效益分析", "cost"),
    "6.1": ("预算分配建议", "budget tiers"),
    "6.2": ("二手市场注意事项", "buying used"),
    "7": ("典型配置案例", "example builds"),
    "7.1": ("个人研究型配置", "personal research build"),
    "7.2": ("企业训练型配置", "enterprise training build"),
    "8": ("常见问题解答", "FAQ"),
    "8.1": ("是否需要专业工作站？", "workstation or not"),
    "8.2": ("集成显卡能否运行PyTorch？", "integrated graphics"),
    "8.3": ("如何优化硬件利用率？", "hardware utilisation"),
    "9": ("未来趋势与建议", "trends"),
    "9.1": ("技术发展方向", "technology trends"),
    "9.2": ("长期投资策略", "long-term buying"),
}

# "§N" cites the guide unless a named paper precedes it ("QLoRA paper §3"); "guide's §N" keeps its own wording.
_SECTION_REFERENCE = re.compile(r"(?<!paper )(?P<prefix>(?:[Gg]uide's (?:own )?|[Gg]uide )?)§(?P<number>\d+(?:\.\d+)?)")


def cite_guide(line: str) -> str:
    """Each "§2.1" or "guide §2.1" in `line` as "guide §2.1 显存需求与模型规模 (GPU memory vs model size)".

    "the guide's §5.2" keeps its wording ("the guide's §5.2 扩展性设计 (expandability)"); "QLoRA paper §3" is
    another document's section and is left alone. Idempotent: a reference already followed by its title is kept.
    """

    def titled(match: re.Match[str]) -> str:
        number = match.group("number")
        if number not in SECTION_TITLES:
            return match.group(0)
        title, gloss = SECTION_TITLES[number]
        suffix = f" {title} ({gloss})"
        if line.startswith(suffix, match.end()):
            return match.group(0)
        return f"{match.group('prefix') or 'guide '}§{number}{suffix}"

    return _SECTION_REFERENCE.sub(titled, line)
