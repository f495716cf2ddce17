"""The shared vectors of sdk/testdata (SPEC §15), checked as the Go tests check them."""

import json
import unittest
from pathlib import Path

from countersign import _jcs
from countersign._flow import idempotency_key
from countersign._outcome import CAUSES, message

TESTDATA = Path(__file__).resolve().parents[2] / "testdata"


def load(name: str) -> dict:
    return json.loads((TESTDATA / name).read_text(encoding="utf-8"))


class DigestVectors(unittest.TestCase):
    def test_canonical_and_digest(self) -> None:
        vectors = load("digests.json")["vectors"]
        self.assertGreaterEqual(len(vectors), 50)
        for v in vectors:
            with self.subTest(v["name"]):
                self.assertEqual(_jcs.canonicalize(v["binding"]), v["canonical"])
                self.assertEqual(_jcs.call_digest(v["binding"]), v["call_digest"])

    def test_invalid_arguments_refused(self) -> None:
        for v in load("digests.json")["invalid"]:
            with self.subTest(v["name"]), self.assertRaises(ValueError):
                _jcs.loads(v["arguments"])

    def test_python_values(self) -> None:
        for value, want in [(-0.0, "0"), (1e21, "1e+21"), (1e-7, "1e-7"), (2**53, "9007199254740992"),
                            (0.1 + 0.2, "0.30000000000000004"), ({"\ue000": 1, "\U0001f600": 2}, '{"\U0001f600":2,"\ue000":1}'),
                            ("\u2028/\x1f", '"\u2028/\\u001f"'), ((1, [2]), "[1,[2]]")]:
            with self.subTest(value=value):
                self.assertEqual(_jcs.canonicalize(value), want)
        for bad in [float("nan"), float("inf"), 2**53 + 1, "\ud800", {1: 2}, b"x"]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                _jcs.canonicalize(bad)


class OutcomeVectors(unittest.TestCase):
    def test_messages(self) -> None:
        f = load("outcomes.json")
        kinds = set()
        for v in f["vectors"]:
            kinds.add(v["kind"])
            with self.subTest(v["name"]):
                self.assertEqual(message(v["kind"], v["request"], cause=v["cause"], abandoned=v["abandoned"]), v["message"])
        self.assertEqual(kinds, {"ran", "denied", "expired", "approval_expired", "cancelled", "unavailable"})

    def test_causes(self) -> None:
        self.assertEqual(CAUSES, load("outcomes.json")["causes"])


class IdempotencyVectors(unittest.TestCase):
    def test_keys(self) -> None:
        for v in load("idempotency.json")["vectors"]:
            with self.subTest(v):
                self.assertEqual(idempotency_key(v["session"], v["tool_call_id"]), v["idempotency_key"])
        self.assertNotEqual(idempotency_key("s", None), idempotency_key("s", None))


if __name__ == "__main__":
    unittest.main()
