"""A family program that misbehaves as its first argument says (tests)."""
import json, os, random, sys, time

mode = sys.argv[1] if len(sys.argv) > 1 else "good"
req = json.load(sys.stdin)
kind = req["request"]
DESCRIBE = dict(name="odd", description="a test family",
                dimensions=[dict(path="n", description="size", min=1, max=5, step=1, integer=True, harder="up")],
                presets=dict(easy=dict(n=1), hard=dict(n=5)),
                instance_schema=dict(type="object", required=["id", "n"], properties=dict(n=dict(type="integer"))))
if mode == "bad-preset":
    DESCRIBE["presets"]["hard"] = dict(n=9)
if kind == "describe":
    reply = DESCRIBE
elif mode == "hang":
    time.sleep(60); reply = {}
elif mode == "crash":
    print("something broke", file=sys.stderr); sys.exit(2)
elif mode == "garbage":
    print("loading...\n{not json"); sys.exit(0)
elif mode == "flood":
    sys.stdout.write("[" + "0," * (10 << 20) + "0]"); sys.exit(0)
elif kind == "generate":
    rng = random.Random(req["seed"] if mode != "random" else time.time_ns() ^ os.getpid())
    n = req["config"]["n"]
    reply = dict(instances=[dict(id=f"i{k}", n=n if mode != "schema" else "big", x=rng.random())
                            for k in range(req["count"] - (mode == "short"))])
elif kind == "train":
    with open(os.path.join(req["out_dir"], "ck.txt"), "w") as f:
        f.write(f"{req['checkpoint'] and open(req['checkpoint']).read()}+{len(req['instances'])}")
    reply = dict(checkpoint="ck.txt" if mode != "no-file" else "missing.txt", metrics=dict(steps=req["budget"]))
elif kind == "evaluate":
    out = [dict(id=i["id"], success=k % 2, **{"return": float(k)}, steps=k) for k, i in enumerate(req["instances"])]
    reply = dict(outcomes=out if mode != "lost" else out[1:])
json.dump(reply, sys.stdout)
