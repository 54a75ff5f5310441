"""FrozenLake as an envsmith family, with its own trainer and evaluator.

One agent walks from S to G on an n x n lake of frozen cells (F) and holes
(H); with probability `slip` a move goes sideways. Configuration space:
size, hole density, slip. The trainer is tabular Q-learning over what the
agent sees (the four neighbouring cells and the direction of the goal), so
one table plays every lake. Speaks envsmith's program protocol: one JSON
request on stdin, one JSON reply on stdout (docs/environments.md).
Standard library only.
"""
import json, os, random, sys
from collections import deque

MOVES = [(-1, 0), (0, 1), (1, 0), (0, -1)]  # up, right, down, left
DIMENSIONS = [
    dict(path="size", description="side of the square lake", min=4, max=12, step=1, integer=True, harder="up"),
    dict(path="holes", description="share of cells that are holes", min=0.0, max=0.35, step=0.05, integer=False, harder="up"),
    dict(path="slip", description="chance that a move goes sideways", min=0.0, max=0.3, step=0.05, integer=False, harder="up"),
]
PRESETS = {"easy": dict(size=4, holes=0.1, slip=0.0), "medium": dict(size=7, holes=0.2, slip=0.1),
           "hard": dict(size=10, holes=0.3, slip=0.2)}


def reachable(grid):
    n, seen, todo = len(grid), {(0, 0)}, deque([(0, 0)])
    while todo:
        r, c = todo.popleft()
        for dr, dc in MOVES:
            q = (r + dr, c + dc)
            if 0 <= q[0] < n and 0 <= q[1] < n and q not in seen and grid[q[0]][q[1]] != "H":
                seen.add(q); todo.append(q)
    return (n - 1, n - 1) in seen


def generate(config, seed, count):
    out = []
    for k in range(count):
        rng = random.Random(f"{seed}/{k}")
        n = int(config["size"])
        while True:
            cells = [["H" if rng.random() < config["holes"] else "F" for _ in range(n)] for _ in range(n)]
            cells[0][0], cells[n - 1][n - 1] = "S", "G"
            grid = ["".join(row) for row in cells]
            if reachable(grid):
                break
        out.append(dict(id=f"lake-{seed}-{k:04d}", grid=grid, slip=config["slip"]))
    return out


def view(grid, pos):
    n, (r, c) = len(grid), pos
    near = "".join(grid[r + dr][c + dc] if 0 <= r + dr < n and 0 <= c + dc < n else "W"
                   for dr in (-1, 0, 1) for dc in (-1, 0, 1))
    return near + str((r < n - 1) - (r > n - 1)) + str((c < n - 1) - (c > n - 1))


def step(inst, pos, action, rng):
    if rng.random() < inst["slip"]:
        action = (action + rng.choice([1, 3])) % 4
    n, (dr, dc) = len(inst["grid"]), MOVES[action]
    r, c = min(max(pos[0] + dr, 0), n - 1), min(max(pos[1] + dc, 0), n - 1)
    cell = inst["grid"][r][c]
    return (r, c), (1.0 if cell == "G" else -1.0 if cell == "H" else -0.01), cell in "GH", cell == "G"


def episode(inst, q, rng, explore=0.0, learn=False):
    pos, total, n = (0, 0), 0.0, len(inst["grid"])
    for t in range(1, 4 * n * n + 1):
        s = view(inst["grid"], pos)
        values = q.setdefault(s, [0.0] * 4)
        a = rng.randrange(4) if rng.random() < explore else max(range(4), key=lambda i: (values[i], -i))
        pos, reward, done, won = step(inst, pos, a, rng)
        total += reward
        if learn:
            nxt = 0.0 if done else max(q.setdefault(view(inst["grid"], pos), [0.0] * 4))
            values[a] += 0.1 * (reward + 0.95 * nxt - values[a])
        if done:
            return won, total, t
    return False, total, t


def train(req):
    q = {}
    if req.get("checkpoint"):
        with open(req["checkpoint"]) as f:
            q = json.load(f)
    rng, steps, instances = random.Random(req["seed"]), 0, req["instances"]
    while steps < req["budget"]:
        steps += episode(rng.choice(instances), q, rng, explore=0.1, learn=True)[2]
    with open(os.path.join(req["out_dir"], "q.json"), "w") as f:
        json.dump(q, f, sort_keys=True)
    return dict(checkpoint="q.json", metrics=dict(states=len(q), steps=steps))


def evaluate(req):
    q = {}
    if req.get("checkpoint"):
        with open(req["checkpoint"]) as f:
            q = json.load(f)
    outcomes = []
    for inst in req["instances"]:
        won, total, steps = episode(inst, q, random.Random(f"{req['seed']}/{inst['id']}"), explore=0.05)
        outcomes.append(dict(id=inst["id"], success=int(won), **{"return": round(total, 4)}, steps=steps))
    return dict(outcomes=outcomes)


def main():
    req = json.load(sys.stdin)
    kind = req["request"]
    if kind == "describe":
        reply = dict(name="python-lake", description="FrozenLake: size, hole density, slip",
                     dimensions=DIMENSIONS, presets=PRESETS,
                     instance_schema=dict(type="object", required=["id", "grid", "slip"]), requests=["render"],
                     suites=dict(hard=dict(split="test", config=dict(preset="hard"), seed=10**6, count=50)))
    elif kind == "generate":
        reply = dict(instances=generate(req["config"], req["seed"], req["count"]))
    elif kind == "render":
        reply = dict(text="\n".join(req["instance"]["grid"]))
    else:
        reply = {"train": train, "evaluate": evaluate}[kind](req)
    json.dump(reply, sys.stdout)


if __name__ == "__main__":
    main()
