"""One-thread PyTorch reference for bench/policy_throughput.ts.

The same PPO minibatch step as envsmith's learner (forward of the
162-64-64-(5+1) tanh MLP, clipped surrogate + value + entropy loss, backward,
global gradient-norm clipping, Adam), on the observation rows the bench
writes, timed for --seconds and printed as JSON samples/s. Not a test
dependency: the bench skips this column (and says why) when torch is absent.

python3 bench/ppo_torch.py ROWS.f32 --dim 162 --minibatch 512 --seconds 1.5 [--cpu-time]
"""

import argparse
import json
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("--dim", type=int, required=True)
    ap.add_argument("--minibatch", type=int, default=512)
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--hidden", default="64,64")
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by the process's CPU time, not wall time (a shared machine)",
    )
    a = ap.parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as e:  # the bench reports the reason
        print(json.dumps({"skipped": f"{e}"}))
        return
    torch.set_num_threads(1)
    torch.manual_seed(0)
    obs = np.fromfile(a.rows, dtype=np.float32).reshape(-1, a.dim)
    mb = a.minibatch
    x = torch.from_numpy(obs[:mb].copy())
    hidden = [int(h) for h in a.hidden.split(",")]
    layers, width = [], a.dim
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.Tanh()]
        width = h
    layers.append(torch.nn.Linear(width, 6))
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(net.parameters(), lr=3e-4, eps=1e-5)
    g = torch.Generator().manual_seed(3)
    actions = torch.randint(0, 5, (mb,), generator=g)
    logp_old = torch.full((mb,), -1.6094)
    adv = torch.randn(mb, generator=g)
    ret = torch.randn(mb, generator=g)

    def step() -> None:
        out = net(x)
        logits, v = out[:, :5], out[:, 5]
        logp_all = torch.log_softmax(logits, dim=1)
        logp = logp_all.gather(1, actions[:, None])[:, 0]
        ratio = torch.exp(logp - logp_old)
        a_n = (adv - adv.mean()) / (adv.std(unbiased=False) + 1e-8)
        pg = -torch.min(ratio * a_n, torch.clamp(ratio, 0.8, 1.2) * a_n).mean()
        vl = 0.5 * ((v - ret) ** 2).mean()
        ent = -(logp_all.exp() * logp_all).sum(1).mean()
        loss = pg + 0.5 * vl - 0.01 * ent
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        opt.step()

    for _ in range(5):
        step()
    clock = time.process_time if a.cpu_time else time.perf_counter
    n, t0 = 0, clock()
    while clock() - t0 < a.seconds:
        step()
        n += mb
    dt = clock() - t0
    print(json.dumps({
        "samples_per_s": n / dt,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
    }))


if __name__ == "__main__":
    sys.exit(main())
