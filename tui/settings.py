"""The dashboard's remembered choices (which panels show, what the GPU charts show), its alert rules and flags.

Kept in `<config dir>/dashboard.toml` (PTH_TOP_CONFIG_DIR overrides the folder), written atomically
whenever a choice changes. A file that cannot be read or makes no sense gives one line of reason and
the defaults; it is never a crash and never overwritten: while it is refused, changes apply but are not saved.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import tomli_w

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from pth_top.configs.fileio import FolderRefused, atomic_write_text, folder_problem, read_regular_file
from pth_top.configs.paths import CONFIG_DIR_VARIABLE, UserDirError, check_override, user_config_dir
from pth_top.recorder.alert_rules import AlertSettings, alert_settings, alert_table
from pth_top.sensors.gpu_flags import FlagThresholds, thresholds_from_table, thresholds_table
from pth_top.text import printable

SETTINGS_FILE_NAME = "dashboard.toml"
# What the two GPU history charts show, in the order the key cycles through them.
GPU_HISTORY_VIEWS: tuple[tuple[str, str], ...] = (
    ("util", "mem"), ("power", "temp"), ("util", "power"), ("mem", "temp"),
)
FILE_HEADER = "# pth-top dashboard settings, rewritten when you change them (keys h, i, c); [alerts] is kept.\n"
# An energy price above this per kWh is a typo (cents for units).
MAX_PRICE_PER_KWH = 100.0
DEFAULT_CURRENCY = "EUR"
CURRENCY_SIGNS = "$€£¥₹₩₽¤"
NOT_SAVED_WHILE_REFUSED = (
    "settings changes are not saved: the settings file was refused at start (fix or remove it, then restart)"
)


@dataclass(frozen=True, slots=True)
class DashboardSettings:
    # The history panel (charts or sparklines) is shown.
    history_shown: bool = True
    # The disk and network panels are shown; None: when the terminal is tall enough.
    io_shown: bool | None = None
    # What the two GPU history charts show: an entry of GPU_HISTORY_VIEWS.
    gpu_history: tuple[str, str] = GPU_HISTORY_VIEWS[0]
    # The [alerts] table: rules, destinations and delivery (recorder.alert_rules); written back as far as not default.
    alerts: AlertSettings = AlertSettings()
    # When a GPU row says STUCK (hang in a collective) or SLOW (straggler): the [flags] table.
    flags: FlagThresholds = FlagThresholds()
    # The Jobs view's cost column: energy price per kWh and its currency ([jobs] table); None: no cost shown.
    energy_price_per_kwh: float | None = None
    currency: str = DEFAULT_CURRENCY

    def next_gpu_history(self) -> DashboardSettings:
        """The settings with the GPU charts moved on to the next view."""
        position = GPU_HISTORY_VIEWS.index(self.gpu_history) if self.gpu_history in GPU_HISTORY_VIEWS else -1
        return replace(self, gpu_history=GPU_HISTORY_VIEWS[(position + 1) % len(GPU_HISTORY_VIEWS)])


def settings_path() -> Path:
    """Raises UserDirError when PTH_TOP_CONFIG_DIR names a relative folder."""
    check_override(CONFIG_DIR_VARIABLE)
    return user_config_dir() / SETTINGS_FILE_NAME


def load_settings(path: Path | None = None) -> tuple[DashboardSettings, str | None]:
    """The saved settings and None, or the defaults and one line saying why the file was not used.

    A missing file is not a problem: it is the defaults.
    """
    try:
        path = path or settings_path()
    except UserDirError as error:
        return DashboardSettings(), f"settings not loaded: {error}"
    try:
        data = tomllib.loads(read_regular_file(path).decode("utf-8"))
    except FileNotFoundError:
        return DashboardSettings(), None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        if isinstance(error, NotADirectoryError) and (problem := folder_problem(path.parent)):
            return DashboardSettings(), f"settings not loaded: settings directory {problem}; using defaults"
        return DashboardSettings(), f"settings file {printable(str(path))} ignored: {_reason(error)}; using defaults"
    try:
        return settings_from_dict(data), None
    except ValueError as error:
        return DashboardSettings(), f"settings file {printable(str(path))} ignored: {error}; using defaults"


def settings_from_dict(data: dict[str, Any]) -> DashboardSettings:
    """Settings from the file's tables; ValueError (one line) for a value of the wrong kind."""
    monitor = data.get("monitor", {})
    if not isinstance(monitor, dict):
        raise ValueError("[monitor] is not a table")
    settings = DashboardSettings()
    history_shown = monitor.get("history", settings.history_shown)
    if not isinstance(history_shown, bool):
        raise ValueError("monitor.history must be true or false")
    io_shown = monitor.get("disk_network", "auto")
    if io_shown != "auto" and not isinstance(io_shown, bool):
        raise ValueError('monitor.disk_network must be true, false or "auto"')
    gpu_history = monitor.get("gpu_history", "+".join(settings.gpu_history))
    views = {"+".join(view): view for view in GPU_HISTORY_VIEWS}
    if not isinstance(gpu_history, str) or gpu_history not in views:
        raise ValueError(f"monitor.gpu_history must be one of {', '.join(views)}")
    alerts = alert_settings(data.get("alerts", {}))
    flags = thresholds_from_table(data.get("flags", {}))
    price, currency = energy_price(data.get("jobs", {}))
    return DashboardSettings(
        history_shown, None if io_shown == "auto" else io_shown, views[gpu_history], alerts, flags, price, currency
    )


def energy_price(table: Any) -> tuple[float | None, str]:
    """[jobs] energy_price_per_kwh (a number, 0 to MAX_PRICE_PER_KWH) and currency (1-8 letters or a sign)."""
    if not isinstance(table, dict):
        raise ValueError("[jobs] is not a table")
    unknown = sorted(set(table) - {"energy_price_per_kwh", "currency"})
    if unknown:
        raise ValueError(f"jobs.{printable(str(unknown[0]), limit=40)} is not a setting")
    price = table.get("energy_price_per_kwh")
    if price is not None and (isinstance(price, bool) or not isinstance(price, (int, float))
                              or not 0 <= price <= MAX_PRICE_PER_KWH):
        raise ValueError(f"jobs.energy_price_per_kwh must be a number from 0 to {MAX_PRICE_PER_KWH}")
    currency = table.get("currency", DEFAULT_CURRENCY)
    if not isinstance(currency, str) or not 1 <= len(currency) <= 8 or not all(
        character.isalpha() or character in CURRENCY_SIGNS for character in currency
    ):
        raise ValueError("jobs.currency must be 1 to 8 letters or a currency sign (EUR, USD, $, €)")
    return (None if price is None else float(price)), currency


def settings_to_toml(settings: DashboardSettings) -> str:
    monitor = {
        "history": settings.history_shown,
        "disk_network": "auto" if settings.io_shown is None else settings.io_shown,
        "gpu_history": "+".join(settings.gpu_history),
    }
    alerts = alert_table(settings.alerts)
    flags = thresholds_table(settings.flags)
    jobs: dict[str, Any] = {} if settings.energy_price_per_kwh is None else {
        "energy_price_per_kwh": settings.energy_price_per_kwh, "currency": settings.currency,
    }
    tables = {"monitor": monitor, **({"alerts": alerts} if alerts else {}), **({"flags": flags} if flags else {}),
              **({"jobs": jobs} if jobs else {})}
    return FILE_HEADER + tomli_w.dumps(tables)


def save_settings(settings: DashboardSettings, path: Path | None = None) -> str | None:
    """Write the settings atomically; None when saved, else one line saying why not."""
    try:
        path = path or settings_path()
        atomic_write_text(path, settings_to_toml(settings), overwrite=True)
    except UserDirError as error:
        return f"settings not saved: {error}"
    except FolderRefused as error:
        return f"settings not saved: settings directory {error.strerror}"
    except OSError as error:
        return f"settings not saved to {printable(str(path))}: {_reason(error)}"
    return None


def _reason(error: BaseException) -> str:
    reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return printable(str(reason), limit=200)
