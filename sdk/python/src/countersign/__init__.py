"""countersign: hold an AI agent's tool call until it is approved, and run
it only with a valid approval, once (SPEC §15).

    from countersign import Client
    client = Client()                       # COUNTERSIGN_URL, COUNTERSIGN_TOKEN

    @client.guard("issue_refund")
    def issue_refund(payment_id: str, amount: int, currency: str) -> str: ...

    outcome = issue_refund(payment_id="payment_123", amount=4900, currency="GBP")
    print(outcome.message)                  # what to tell the agent
"""

from ._client import AsyncClient, Client, CountersignError
from ._jcs import call_digest, canonicalize
from ._outcome import Kind, Outcome

__all__ = ["Client", "AsyncClient", "CountersignError", "Outcome", "Kind", "call_digest", "canonicalize"]
__version__ = "0.1.0"
