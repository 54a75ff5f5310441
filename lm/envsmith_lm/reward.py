"""The client of envsmith's reward process (`deno task cli reward`): the
dynamics are never re-implemented here."""

import json
import subprocess

from .common import UserError


class RewardProcess:
    def __init__(self, command: list, instances: str):
        try:
            self.proc = subprocess.Popen(
                [*command, "reward", "--instances", instances],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        except OSError as e:
            raise UserError(f"cannot start the reward process {command[0]}: {e.strerror}") from e

    def score(self, items: list) -> list:
        """Rewards of [(id, completion), ...], in order."""
        if not items:
            return []
        payload = "".join(json.dumps({"id": i, "completion": c}) + "\n" for i, c in items)
        self.proc.stdin.write(payload)
        self.proc.stdin.flush()
        out = []
        for _ in items:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read()
                raise RuntimeError(f"the reward process ended: {err.strip()}")
            r = json.loads(line)
            if "error" in r:
                raise RuntimeError(f"reward process refused a request: {r['error']}")
            out.append(r)
        return out

    def close(self):
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
