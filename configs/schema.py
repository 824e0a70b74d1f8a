"""File schemas as msgspec Structs, and the one translation of a msgspec error into a key path and a reason.

msgspec decides what is valid; its error names a `$.path`. `convert` walks that path through the data
and the Struct's annotations, so the caller can name the key (and find its TOML line) and word the reason.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import typing
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import msgspec
import msgspec.inspect as mi

from pth_top.configs.errors import ConfigFileError, shown

T = TypeVar("T")
# What a TOML parser hands over natively: msgspec must not turn the text "2025-06-01" into a date.
TOML_NATIVE_TYPES = (dt.date, dt.datetime, dt.time)
_AT = re.compile(r" - at `(key` in `)?\$(.*)`$")  # "at `key` in `$.x`": a key of the table at $.x
_STEP = re.compile(r"\.(\w+)|\[(\d+|\.\.\.)\]")
_MISSING = re.compile(r"^Object missing required field `")


class Schema(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Base of every file schema: an unknown key is refused, a loaded value is immutable.

    Subclasses repeat `frozen=True`: type checkers do not inherit it through dataclass_transform (msgspec#657).
    """


@dataclass(frozen=True)
class Problem:
    """Where data broke its schema: keys from the root, what went wrong, the value and what it had to be."""

    keys: tuple[str, ...]
    kind: str  # "missing", "unknown" (a key not in a struct), "key" (a key a dict does not allow) or "value"
    value: Any = None
    info: Any = None  # the msgspec.inspect type the value had to meet (None for an unknown key)
    allowed: tuple[str, ...] = ()  # the keys the table holding it allows
    annotation: Any = None  # the Python type behind `info` (its Literal choices in declared order)
    item: int | None = None  # which item of the list at `keys` is wrong (0-based), when the list is of numbers


class SchemaError(ConfigFileError):
    """Data that does not fit a schema: `problem` says where; the loader that knows the file adds path and line."""

    def __init__(self, problem: Problem, reason: str) -> None:
        super().__init__(reason, key=".".join(problem.keys) or None)
        self.problem = problem


def convert(data: Any, schema: Any, describe: Callable[[Problem], str] | None = None, *, given: Any = None) -> Any:
    """`data` as `schema` (a Struct or any annotation); SchemaError with the reason `describe` gives.

    `given`: what the user wrote, when `data` is a normalised copy of it (the error shows the user's value).
    """
    try:
        return msgspec.convert(data, schema, builtin_types=TOML_NATIVE_TYPES)
    except msgspec.ValidationError as error:
        problem = locate(str(error), data if given is None else given, schema)
    raise SchemaError(problem, (describe or reason)(problem))


def locate(message: str, data: Any, schema: Any) -> Problem:
    """The Problem a msgspec error message describes, found by walking its `$.path` through data and schema."""
    at = _AT.search(message)
    value, annotation, keys, item = data, schema, list[str](), None
    for name, index in _STEP.findall(at.group(2)) if at else ():
        annotation = _bare(annotation)
        if name:
            annotation = _field_types(annotation)[name]
            value, keys = value[name], [*keys, name]
        elif index == "..." and isinstance(value, dict):  # msgspec does not name the dict key: the first that fails
            item_type = typing.get_args(annotation)[1]
            key = next(key for key, item in value.items() if not _fits(item, item_type))
            value, annotation, keys = value[key], item_type, [*keys, key]
        elif isinstance(value, list) and index.isdigit() and typing.get_args(annotation)[0] is not str:
            item, annotation = int(index), typing.get_args(annotation)[0]
            value = value[item]
        else:  # in a list of text: "must be a list of text" says it all
            break
    head = message[: at.start()] if at else message
    if at and at.group(1):  # a dict key that is not allowed (a role that is not one): the first such key
        key_type = typing.get_args(_bare(annotation))[0]
        bad_key = next(key for key in value if not _fits(key, key_type))
        return Problem((*keys, bad_key), "key", bad_key, mi.type_info(key_type), annotation=key_type)
    if head.startswith(("Object missing required field", "Object contains unknown field")):
        fields = _field_types(_bare(annotation))
        allowed = tuple(fields)
        if (missing_at := _MISSING.match(head)) is not None:
            missing = head[missing_at.end():-1]
            return Problem((*keys, missing), "missing", None, mi.type_info(fields[missing]), allowed, fields[missing])
        unknown = next(key for key in value if key not in fields)
        return Problem((*keys, unknown), "unknown", value[unknown], None, allowed)
    return Problem(tuple(keys), "value", value, mi.type_info(annotation), annotation=annotation, item=item)


def _fits(value: Any, annotation: Any) -> bool:
    try:
        msgspec.convert(value, annotation, builtin_types=TOML_NATIVE_TYPES)
    except msgspec.ValidationError:
        return False
    return True


def _bare(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _field_types(struct: Any) -> dict[str, Any]:
    return {field.encode_name: field.type for field in msgspec.structs.fields(struct)}


def constraints(info: Any) -> tuple[Any, str]:
    """(the type without its Metadata wrapper, its description or "")."""
    if isinstance(info, mi.Metadata):
        return info.type, (info.extra_json_schema or {}).get("description", "")
    return info, ""


def reason(problem: Problem) -> str:
    """Today's wording for a problem: missing or unknown key, wrong type, out of range."""
    if problem.kind == "missing":
        return "missing table" if isinstance(constraints(problem.info)[0], mi.StructType) else "missing key"
    if problem.kind == "unknown":
        return f"unknown key (expected one of {', '.join(problem.allowed)})"
    because = value_reason(constraints(problem.info)[0], problem.value, problem.annotation)
    return because if problem.item is None else f"item {problem.item + 1} {because}"


def choices(annotation: Any) -> tuple[Any, ...]:
    """A Literal's values in the order they are declared (msgspec.inspect sorts them)."""
    return typing.get_args(_bare(annotation))


RELEASE_PATTERN = r"^([0-9]+\.[0-9]+(\.[0-9]+)?)?$"  # a package's release, major.minor[.patch], or empty
PATTERN_WORDS = {RELEASE_PATTERN: "a release number like 4.38.2, or empty"}


def value_reason(info: Any, value: Any, annotation: Any = None) -> str:
    """Why `value` does not meet the inspected type `info` (of the Python type `annotation`)."""
    got = shown(value)
    if isinstance(info, (mi.IntType, mi.FloatType)):
        whole = isinstance(value, int) or isinstance(value, float) and math.isfinite(value) and value.is_integer()
        if isinstance(info, mi.IntType) and (isinstance(value, bool) or not whole):
            return f"must be a whole number, got {got}"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be a number, got {got}"
        if isinstance(value, float) and not math.isfinite(value):
            return f"must be a finite number, got {got}"
        # Compared before any conversion: an int too large for a float is refused, not an OverflowError.
        return range_reason(info, value) or f"must be a whole number, got {got}"
    if isinstance(info, mi.BoolType):
        return f"must be true or false, got {got}"
    if isinstance(info, mi.LiteralType):
        allowed = choices(annotation) if annotation is not None else info.values
        return f"must be one of {', '.join(map(str, allowed))}, got {got}"
    if isinstance(info, mi.StrType):
        if info.pattern in PATTERN_WORDS and isinstance(value, str):
            return f"must be {PATTERN_WORDS[info.pattern]}, got {got}"
        if info.max_length is not None:
            return f"must be non-empty text of at most {info.max_length} characters, got {got}"
        if not isinstance(value, str):
            return f"must be text, got {type(value).__name__}"
        return f"must be non-empty text, got {got}"
    if isinstance(info, mi.ListType):
        return "must be a list of text" if isinstance(info.item_type, mi.StrType) else f"must be a list, got {got}"
    if isinstance(info, (mi.StructType, mi.DictType)):
        return f"must be a table, got {type(value).__name__}"
    if isinstance(info, mi.DateTimeType):
        return f"must be a TOML date and time like 2026-01-02 03:04:05+00:00, got {got}"
    if isinstance(info, mi.DateType):
        return f"must be a TOML date like 2025-06-01, got {got}"
    return f"has the wrong type, got {got}"


def range_reason(info: Any, value: float) -> str | None:
    """Which bound of an IntType/FloatType `value` breaks, in words; None when it breaks none."""
    if info.ge is not None and value < info.ge:
        return f"must be at least {_bound(info.ge)}, got {shown(value)}"
    if info.gt is not None and value <= info.gt:
        return f"must be above {_bound(info.gt)}, got {shown(value)}"
    if info.le is not None and value > info.le:
        return f"must be at most {_bound(info.le)}, got {shown(value)}"
    return None


def _bound(limit: float) -> str:
    """A bound as a person writes it: 2,000,000 (not 2e+06), 0.95."""
    return f"{int(limit):,}" if float(limit).is_integer() else f"{limit:g}"
