"""Outcomes and their words, the same words as the Go adapter's
Outcome.String (SPEC §7, §15; checked against sdk/testdata/outcomes.json)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

__all__ = ["Outcome", "Kind", "CAUSES", "message"]

Kind = Literal["ran", "denied", "expired", "approval_expired", "cancelled", "unavailable"]

#: The adapter's words for each cause of an unavailable outcome.
CAUSES: dict[str, str] = {
    "unreachable": "countersign could not be reached",
    "wait_limit": "the wait limit passed before a decision",
    "refused": "countersign refused the request",
    "bad_response": "countersign answered nonsense",
    "digest_mismatch": "the approval is for a different call",
    "edited": "the call was approved only with edits this harness cannot apply",
    "already_claimed": "the approval was already used",
    "not_approved": "the request is not approved",
    "approval_expired": "the approval expired before the call could start",
    "abandoned": "the call was abandoned",
    "invalid_call": "invalid call",
}


@dataclass(frozen=True)
class Outcome:
    """What became of one call. Not running is an outcome, never an exception.

    kind: ``ran``, ``denied``, ``expired`` (no decision in time: nobody said
    no), ``approval_expired``, ``cancelled`` or ``unavailable`` (approval
    could not be obtained: nobody said no). message: words to give the
    agent. request: the last record seen (None when none is known). value:
    what the tool function returned, for ``ran``. cause: why, for
    ``unavailable`` (and an abandoned ``cancelled``)."""

    kind: Kind
    message: str
    request: dict[str, Any] | None = None
    value: Any = None
    cause: str | None = None
    abandoned: bool = field(default=False, repr=False)

    @property
    def ran(self) -> bool:
        return self.kind == "ran"

    @property
    def request_id(self) -> str | None:
        return None if self.request is None else self.request.get("id")

    def __str__(self) -> str:
        return self.message


def make(kind: Kind, request: dict[str, Any] | None, *, cause: str | None = None,
         abandoned: bool = False, value: Any = None) -> Outcome:
    return Outcome(kind=kind, message=message(kind, request, cause=cause, abandoned=abandoned),
                   request=request, value=value, cause=cause, abandoned=abandoned)


def message(kind: str, request: dict[str, Any] | None, *, cause: str | None = None,
            abandoned: bool = False) -> str:
    """The words for an outcome, exactly as the Go adapter's."""
    d = None if request is None else request.get("decision")
    ref = _ref(request)
    if kind == "ran":
        if request is not None and request.get("edited"):
            return ("countersign: approved with edits by " + _by(d) + _note(d) + ref +
                    "; the approval is claimed for the edited call, which runs instead")
        return "countersign: approved by " + _by(d) + _note(d) + ref + "; the approval is claimed for this call"
    if kind == "denied":
        return "countersign: denied by " + _by(d) + _note(d) + ref + "; the call did not run"
    if kind == "expired":
        return ("countersign: no decision was made in time" + ref + _expired_at(request) +
                "; nobody denied the call, and it did not run")
    if kind == "approval_expired":
        return ("countersign: the approval by " + _by(d) + ref + " expired" + _approval_expiry(d) +
                " before the call could start; the call did not run")
    if kind == "cancelled":
        return _cancelled(request, ref, abandoned)
    return ("countersign: approval could not be obtained" + ref + ": " + (cause or "no valid decision") +
            "; nobody denied the call, and it did not run")


def _ref(r: dict[str, Any] | None) -> str:
    if not r or not r.get("id"):
        return ""
    return " (request " + str(r["id"]) + ")"


def _by(d: dict[str, Any] | None) -> str:
    if not d:
        return "an unknown decider"
    by = d.get("by") or {}
    kind, ident = str(by.get("kind") or ""), str(by.get("id") or "")
    fixed = {"person": "person ", "agent": "agent ", "policy": "the policy of member ",
             "read": "the read rule ", "grant": "the kept grant "}
    if kind in fixed:
        return fixed[kind] + ident
    if kind == "own_subagent":
        return "delegation to the agent's own subagent"
    if kind == "rule":
        if d.get("quoted_rule"):
            return "the rule " + go_quote(str(d["quoted_rule"]))
        return "the rule " + ident
    return (kind + " " + ident).strip()


def _note(d: dict[str, Any] | None) -> str:
    if not d or not d.get("note"):
        return ""
    return " with the note " + go_quote(str(d["note"]))


def _expired_at(r: dict[str, Any] | None) -> str:
    t = _time(None if r is None else r.get("deadline_at"))
    return "" if t is None else " before its deadline " + t


def _approval_expiry(d: dict[str, Any] | None) -> str:
    t = _time(None if not d else d.get("expires_at"))
    return "" if t is None else " at " + t


def _cancelled(r: dict[str, Any] | None, ref: str, abandoned: bool) -> str:
    if not abandoned:
        return ("countersign: the request" + ref + " was cancelled by its requester before the call ran" +
                "; nobody denied the call, and it did not run")
    s = "countersign: the call was abandoned before it ran" + ref
    if r is not None and r.get("status") == "cancelled":
        s += ", and its request was cancelled"
    return s + "; nobody denied the call"


def parse_time(s: Any) -> datetime | None:
    """An RFC 3339 time as the server writes it, None for none or Go's zero time."""
    if not isinstance(s, str) or not s:
        return None
    try:
        t = datetime.fromisoformat(s.replace("z", "Z"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return None if t.year <= 1 else t.astimezone(timezone.utc)


def _time(s: Any) -> str | None:
    t = parse_time(s)
    return None if t is None else t.strftime("%Y-%m-%dT%H:%M:%SZ")


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(s: str) -> str:
    """Quote s as Go's strconv.Quote does: printable characters as they
    are, the rest escaped (so a note can never pass for the text around it)."""
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == " " or (unicodedata.category(ch)[0] in "LMNPS"):
            out.append(ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif c < 0x20 or c == 0x7F:
            out.append("\\x%02x" % c)
        elif c < 0x10000:
            out.append("\\u%04x" % c)
        else:
            out.append("\\U%08x" % c)
    out.append('"')
    return "".join(out)
