#!/usr/bin/env python3
"""Times kestrel.Context.run on a .kom the way kes-model-bench times kes_model_execute (run_overhead.sh
puts the two side by side): the same warm-up, iterations and threads, one timestamp pair per call.

    run_overhead.py MODEL.kom [--threads N] [--iterations N] [--warmup N]

Prints one line of JSON: for each way of calling run, min / median / p99 in ms:
  run_into  run(x, outputs=preallocated): what kes-model-bench does (no allocation per call);
  run       run(x): new output arrays every call, the everyday form.
"""
import argparse
import json
import time

import numpy as np

import kestrel


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def timed(call, iterations, warmup):
    for _ in range(warmup):
        call()
    ms = []
    clock = time.perf_counter_ns
    for _ in range(iterations):
        t0 = clock()
        call()
        ms.append((clock() - t0) / 1e6)
    return {"min_ms": min(ms), "median_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    if args.iterations < 1 or args.warmup < 0 or args.threads < 0:
        parser.error("--iterations must be >= 1, --warmup and --threads >= 0")
    with kestrel.Model(args.model) as model, model.context(threads=args.threads) as ctx:
        rng = np.random.default_rng(1)
        inputs = [rng.uniform(-1, 1, size=i.shape).astype(i.dtype) for i in ctx.inputs]
        outputs = [np.empty(o.shape, o.dtype) for o in ctx.outputs]
        result = {"model": args.model, "threads": ctx.threads,
                  "run_into": timed(lambda: ctx.run(inputs, outputs=outputs), args.iterations, args.warmup),
                  "run": timed(lambda: ctx.run(inputs), args.iterations, args.warmup)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
