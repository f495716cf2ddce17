"""RFC 8785 (JCS) canonical JSON and the call digest of SPEC §4.

The canonical form of a value: objects with their members sorted by the
UTF-16 code units of their names, no whitespace, strings with only ``"``,
``\\`` and control characters escaped, and numbers as ECMAScript writes an
IEEE double. A value that cannot be canonical JSON raises ``ValueError``:
NaN and infinities, integers a double cannot hold exactly as written
(``2**53 + 1``), strings holding lone surrogates, non-string keys.
"""

from __future__ import annotations

import hashlib
import json as _json
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

__all__ = ["canonicalize", "call_digest", "binding", "loads"]

_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_MAX_DEPTH = 10000


def canonicalize(value: Any) -> str:
    """Return the RFC 8785 canonical JSON text of value (JSON-shaped Python data)."""
    out: list[str] = []
    _write(out, value, 0)
    return "".join(out)


def call_digest(b: Mapping[str, Any]) -> str:
    """Return ``sha256:`` and the lowercase hex SHA-256 of b's canonical JSON.

    b is a call binding (see :func:`binding`)."""
    return "sha256:" + hashlib.sha256(canonicalize(b).encode("utf-8")).hexdigest()


def binding(
    *,
    tenant: str,
    agent: str,
    capability: Mapping[str, str],
    arguments: Any,
    session: str | None = None,
    turn: str | None = None,
    tool_call_id: str | None = None,
    connection: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the exact-call binding of SPEC §4, absent strings as ""."""
    return {
        "tenant": tenant,
        "agent": agent,
        "session": session or "",
        "turn": turn or "",
        "tool_call_id": tool_call_id or "",
        "capability": {"action": capability["action"], "target": capability["target"]},
        "arguments": arguments,
        "connection": None if connection is None else {"id": connection["id"], "revision": connection["revision"]},
    }


def _write(out: list[str], v: Any, depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise ValueError("jcs: nesting too deep")
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, str):
        out.append(_string(v))
    elif isinstance(v, (int, float)):
        out.append(number(v))
    elif isinstance(v, Mapping):
        _object(out, v, depth)
    elif isinstance(v, Sequence) and not isinstance(v, (bytes, bytearray)):
        out.append("[")
        for i, item in enumerate(v):
            if i:
                out.append(",")
            _write(out, item, depth + 1)
        out.append("]")
    else:
        raise ValueError(f"jcs: {type(v).__name__} is not JSON")


def _object(out: list[str], v: Mapping[Any, Any], depth: int) -> None:
    for k in v:
        if not isinstance(k, str):
            raise ValueError(f"jcs: object key {k!r} is not a string")
        _check_surrogates(k)
    out.append("{")
    for i, k in enumerate(sorted(v, key=lambda s: s.encode("utf-16-be"))):
        if i:
            out.append(",")
        out.append(_string(k))
        out.append(":")
        _write(out, v[k], depth + 1)
    out.append("}")


def _check_surrogates(s: str) -> None:
    for ch in s:
        if "\ud800" <= ch <= "\udfff":
            raise ValueError("jcs: string holds a lone surrogate")


def _string(s: str) -> str:
    _check_surrogates(s)
    parts = ['"']
    for ch in s:
        if ch in _SHORT:
            parts.append(_SHORT[ch])
        elif ch < " ":
            parts.append("\\u%04x" % ord(ch))
        else:
            parts.append(ch)
    parts.append('"')
    return "".join(parts)


def number(v: int | float) -> str:
    """Return v as ECMAScript's Number.prototype.toString writes the double."""
    if isinstance(v, int):
        try:
            f = float(v)
        except OverflowError:
            raise ValueError(f"jcs: {v} does not fit in an IEEE double") from None
        if math.isinf(f) or Decimal(repr(f)) != v:
            raise ValueError(f"jcs: {v} does not round-trip through an IEEE double")
        v = f
    if not math.isfinite(v):
        raise ValueError(f"jcs: {v} is not a JSON number")
    if v == 0:
        return "0"
    sign = "-" if v < 0 else ""
    _, digit_tuple, exp = Decimal(repr(abs(v))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exp = int(exp) + len(digit_tuple) - len(digits)
    k = len(digits)
    n = exp + k  # the decimal point sits after n digits
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mant = digits[0] + ("." + digits[1:] if k > 1 else "")
    return sign + mant + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def loads(text: str | bytes) -> Any:
    """Parse strict JSON as countersign's server does (SPEC §4).

    Duplicate keys, NaN and infinities, numbers a double cannot hold as
    written, and lone surrogates raise ``ValueError``."""
    v = _json.loads(text, object_pairs_hook=_no_duplicates, parse_float=_float, parse_int=_int,
                    parse_constant=_constant)
    canonicalize(v)  # refuses lone surrogates and anything else not canonical
    return v


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"jcs: duplicate key {k!r}")
        out[k] = v
    return out


def _float(s: str) -> float:
    f = float(s)
    if not math.isfinite(f) or Decimal(s) != Decimal(repr(f)):
        raise ValueError(f"jcs: {s} does not round-trip through an IEEE double")
    return f


def _int(s: str) -> int:
    v = int(s)
    number(v)
    return v


def _constant(s: str) -> Any:
    raise ValueError(f"jcs: {s} is not JSON")
