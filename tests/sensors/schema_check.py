"""A small JSON Schema checker for the keywords sensors/snapshot.schema.json uses (no new dependency):
$ref (local), type, const, enum, required, properties, items."""

from __future__ import annotations

from typing import Any

SUPPORTED_KEYWORDS = {
    "$schema", "$id", "$ref", "$defs", "title", "description", "type", "const", "enum", "required",
    "properties", "items",
}
_TYPES = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
}


def resolve(root: dict, reference: str) -> dict:
    assert reference.startswith("#/"), reference
    node: Any = root
    for part in reference[2:].split("/"):
        node = node[part]
    return node


def unused_keywords(schema: Any) -> set[str]:
    """Keywords in `schema` this checker does not understand (the test fails on any)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key not in SUPPORTED_KEYWORDS:
                found.add(key)
            if key in ("properties", "$defs"):
                for sub in value.values():
                    found |= unused_keywords(sub)
            elif key == "items":
                found |= unused_keywords(value)
    return found


def validate(value: Any, schema: dict, root: dict | None = None, path: str = "$") -> list[str]:
    """Every way `value` breaks `schema`, as "path: problem" lines; [] when it conforms."""
    root = root if root is not None else schema
    if "$ref" in schema:
        return validate(value, resolve(root, schema["$ref"]), root, path)
    errors: list[str] = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[name](value) for name in types):
            return [f"{path}: {value!r} is not {'/'.join(types)}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: {value!r} != {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                errors.append(f"{path}: missing {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                errors += validate(value[key], sub, root, f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for position, item in enumerate(value):
            errors += validate(item, schema["items"], root, f"{path}[{position}]")
    return errors
