#!/usr/bin/env python3
"""A threshold curriculum as an envsmith `exec` engineer (standard library only).

envsmith writes the context as one JSON object on stdin (context_type, stats,
failures, behavior, history, config, bounds, ...) and reads one JSON object
from stdout: {"config": ..., "rationale": "..."}. Use it with
  engineer: { name: exec, command: [python3, threshold.py], timeout: 60 }
"""
import json
import sys

HARDER, EASIER = 0.8, 0.4  # success rates that move the curriculum


def bounded(value, name, bounds):
    b = bounds[name]
    return max(b["min"], min(b["max"], value))


def main():
    request = json.load(sys.stdin)
    config, bounds = request["config"], request["bounds"]
    stats = request.get("stats") or {}
    success = stats.get("success_rate")
    if success is None:
        print(json.dumps({"config": config, "rationale": "no statistics: kept the config"}))
        return
    parts = config["mixture"] if "mixture" in config else [{"weight": 1, "config": config}]
    step = 1 if success >= HARDER else -1 if success < EASIER else 0
    for part in parts:
        c = part["config"]
        room = c["width"] * c["height"] // 2
        c["agents"] = min(room, bounded(c["agents"] + step, "agents", bounds))
        c["hole_density"] = round(bounded(c["hole_density"] + 0.05 * step, "hole_density", bounds), 3)
    verb = {1: "harder", -1: "easier", 0: "unchanged"}[step]
    print(f"success {success:.2f} -> {verb}", file=sys.stderr)
    reply = {"config": config, "rationale": f"success {success:.2f}: {verb} (agents and holes {step:+d} step)"}
    json.dump(reply, sys.stdout)


if __name__ == "__main__":
    main()
