"""An exec engineer for the lake family: one step harder after a stage it
solved at least half of, one step easier after one it solved less than a
fifth of.

Reads envsmith's exec-engineer input on stdin (the current `config`, the
stage's findings under `stats`) and writes {"config", "rationale"}. The
dimensions (bounds, step, direction) come from the input when it carries
them, else from the family program's own `describe`.
"""
import json, os, subprocess, sys

req = json.load(sys.stdin)
config = dict(req["config"])
stats = req.get("stats") or {}
success = stats.get("success_rate")
dims = req.get("dimensions")
if not isinstance(dims, list):
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, "lake.py")], input='{"envsmith": 1, "request": "describe"}',
                         capture_output=True, text=True, check=True).stdout
    dims = json.loads(out)["dimensions"]


def moved(d, sign):
    step = d["step"] * (1 if d["harder"] == "up" else -1) * sign
    x = min(max(config[d["path"]] + step, d["min"]), d["max"])
    return round(x) if d["integer"] else round(x, 6)


rationale = "no findings: kept the configuration"
if success is not None:
    sign = 1 if success >= 0.5 else -1 if success < 0.2 else 0
    order = dims if sign > 0 else list(reversed(dims))
    rationale = f"success {success:.2f}: kept the configuration"
    for d in order if sign else []:
        x = moved(d, sign)
        if x != config[d["path"]]:
            rationale = f"success {success:.2f}: {d['path']} {config[d['path']]} -> {x} ({'harder' if sign > 0 else 'easier'})"
            config[d["path"]] = x
            break
json.dump({"config": config, "rationale": rationale}, sys.stdout)
