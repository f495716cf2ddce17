"""A real countersign server for the tests: built from this repository
(go build ./cmd/countersign, or $COUNTERSIGN_BIN) and started on a free
port with a temporary data directory and a config with one agent token
and one person token."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
AGENT_TOKEN, PERSON_TOKEN = "tok-agent-py", "tok-person-py"

CONFIG = """\
listen: 127.0.0.1:{port}
data_dir: {data}
nats_listen: "off"
tenants:
  - id: acme
    members:
      - id: u-1
        policy: {{allow: ["*"], deny: ["tools.call:forbidden_*"]}}
    agents:
      - {{id: agt_main, member: u-1}}
    tokens:
      - {{token: "{person}", principal: "person:u-1", scopes: [approvals:read, approvals:write]}}
      - {{token: "{agent}", principal: "agent:agt_main", scopes: [requests:write]}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="countersign-py-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def binary(self) -> str:
        if os.environ.get("COUNTERSIGN_BIN"):
            return os.environ["COUNTERSIGN_BIN"]
        out = self.dir / "countersign"
        subprocess.run(["go", "build", "-o", str(out), "./cmd/countersign"], cwd=REPO, check=True)
        return str(out)

    def start(self) -> None:
        cfg = self.dir / "countersign.yaml"
        cfg.write_text(CONFIG.format(port=self.port, data=self.dir / "data", person=PERSON_TOKEN, agent=AGENT_TOKEN))
        binary = self.binary()
        with open(self.dir / "server.log", "wb") as log:
            self.proc = subprocess.Popen([binary, "serve", "--config", str(cfg)], cwd=self.dir,
                                         stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("countersign exited: " + (self.dir / "server.log").read_text())
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("countersign did not become ready: " + (self.dir / "server.log").read_text())

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
