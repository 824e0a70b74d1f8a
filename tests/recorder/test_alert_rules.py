"""The [alerts] table: typed rules with defaults; a bad rule or destination is one line naming its key."""

from __future__ import annotations

import pytest

from pth_top.recorder.alert_rules import (
    THROTTLE_REASONS,
    AlertSettings,
    AlertSettingsError,
    alert_settings,
    alert_table,
)
from pth_top.sensors.throttle import THROTTLE_REASON_WORDS


def test_defaults():
    settings = alert_settings({})
    assert settings == AlertSettings() and settings.enabled and settings.bell and settings.destinations == ()
    on = [name for name, rule in settings.rule_items() if rule.enabled]
    assert on == ["gpu_temperature", "xid", "ecc", "throttle", "gpu_idle", "gpu_lost", "gpu_stuck", "disk", "memory",
                  "process_exit"]
    assert not settings.rules.gpu_straggler.enabled
    assert settings.rules.process_exit.patterns == ()  # on, but nothing is watched until you name a job
    assert settings.rules.gpu_temperature.above_c == 85 and settings.rules.throttle.for_s == 60
    assert "power cap" not in settings.rules.throttle.reasons
    assert alert_table(settings) == {}


def test_a_full_table_loads_and_writes_back_only_what_differs():
    table = {
        "destinations": ["json://127.0.0.1:9000/hook", "slack://a/b/c"],
        "delivery": {"timeout_s": 3, "retries": 1, "per_minute": 5},
        "rules": {
            "gpu_temperature": {"above_c": 80, "clear_below_c": 75, "for_s": 10},
            "throttle": {"reasons": ["power cap"]},
            "process_exit": {"patterns": ["train\\.py"]},
            "gpu_memory": {"enabled": True},
        },
    }
    settings = alert_settings(table)
    assert settings.rules.gpu_temperature.above_c == 80 and settings.delivery.timeout_s == 3
    assert settings.rules.throttle.reasons == ("power cap",)
    written = alert_table(settings)
    assert written["rules"]["gpu_temperature"] == {"above_c": 80.0, "clear_below_c": 75.0, "for_s": 10.0}
    assert "xid" not in written["rules"] and alert_settings(written) == settings


def test_the_throttle_reasons_are_the_sensors_words():
    assert THROTTLE_REASONS == tuple(word for _bit, word in THROTTLE_REASON_WORDS)


@pytest.mark.parametrize("table, line", [
    ({"rules": {"gpu_temperature": {"above_c": 900}}},
     "alerts.rules.gpu_temperature.above_c: must be at most 150, got 900"),
    ({"rules": {"gpu_temperature": {"above": 90}}},
     "alerts.rules.gpu_temperature.above: unknown key (expected one of enabled, above_c, clear_below_c, for_s)"),
    ({"rules": {"gpu_temperature": {"above_c": 80, "clear_below_c": 90}}},
     "alerts.rules.gpu_temperature.clear_below_c: must be at most above_c"),
    ({"rules": {"gpu_temprature": {}}}, "alerts.rules.gpu_temprature: unknown key (expected one of gpu_temperature,"),
    ({"rules": {"disk": {"free_below_fraction": 5}}},
     "alerts.rules.disk.free_below_fraction: must be at most 1, got 5"),
    ({"rules": {"gpu_idle": {"for_s": -1}}}, "alerts.rules.gpu_idle.for_s: must be at least 0, got -1"),
    ({"rules": {"xid": {"enabled": "yes"}}}, "alerts.rules.xid.enabled: must be true or false, got 'yes'"),
    ({"rules": {"throttle": {"reasons": ["thermal"]}}},
     "alerts.rules.throttle.reasons: item 1 must be one of power cap,"),
    ({"rules": {"process_exit": {"patterns": ["ok", "(unclosed"]}}},
     "alerts.rules.process_exit.patterns: item 2 is not a regular expression"),
    ({"rules": 3}, "alerts.rules: must be a table, got int"),
    ({"delivery": {"retries": 99}}, "alerts.delivery.retries: must be at most 10, got 99"),
    ({"delivery": {"timeout_s": 0}}, "alerts.delivery.timeout_s: must be above 0, got 0"),
    ({"destinations": ["no-scheme-s3cret"]}, "alerts.destinations: item 1 is not a URL (scheme://...)"),
    ({"destinations": "json://host/s3cret"}, "alerts.destinations: must be a list of Apprise URLs"),
    ({"destinations": ["json://host/s3cret" * 200]}, "alerts.destinations: must be a list of Apprise URLs"),
    ({"bell": 1}, "alerts.bell: must be true or false, got 1"),
])
def test_a_bad_rule_is_one_line_naming_the_key(table, line):
    with pytest.raises(AlertSettingsError) as caught:
        alert_settings(table)
    message = str(caught.value)
    assert message.startswith(line) and "\n" not in message and "s3cret" not in message

