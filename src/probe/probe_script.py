# ppsearch probe: microbenchmarks run on one node of the cluster, with what an
# SGLang node already has (PyTorch). ppsearch sends this file on the standard
# input of `python3 -` (through the spec's launcher, container and sudo rules)
# with one JSON argument saying what to measure, and reads one JSON object
# from the last line of the standard output. It measures; it computes no
# figure: ppsearch turns the timings into rates (src/probe/figures.h), so each
# statistic has one definition. On a machine without CUDA it runs the same
# code on the CPU (gloo for the collectives): that tests the plumbing only.
import datetime
import json
import os
import socket
import sys
import time
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


def now():
    return time.perf_counter()


class Timer:
    """Wall time of GPU work: CUDA events on a GPU, the clock on the CPU."""

    def __init__(self, device):
        self.cuda = device.startswith("cuda")

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def time(self, fn, iterations):
        self.sync()
        if self.cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iterations):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        t0 = now()
        for _ in range(iterations):
            fn()
        return now() - t0


def repeat_for(timer, fn, seconds, max_iterations):
    """Runs fn in doubling batches until `seconds` of it have been timed;
    returns (iterations, seconds)."""
    fn()
    timer.sync()
    total_n, total_s, n = 0, 0.0, 1
    deadline = now() + max(seconds * 4, 1.0)
    while total_s < seconds and total_n < max_iterations and now() < deadline:
        n = min(n, max_iterations - total_n)
        total_s += timer.time(fn, n)
        total_n += n
        n *= 2
    return total_n, total_s


def gemm(cfg, device, timer, skipped):
    out = []
    for shape in cfg["gemm_shapes"]:
        m, n, k, dtype = shape["m"], shape["n"], shape["k"], shape["dtype"]
        if dtype not in DTYPES:
            skipped.append({"what": "gemm %s %dx%dx%d" % (dtype, m, n, k),
                            "why": "the probe times %s GEMMs only" % "/".join(DTYPES)})
            continue
        a = torch.randn(m, k, device=device).to(DTYPES[dtype])
        b = torch.randn(k, n, device=device).to(DTYPES[dtype])
        iterations, seconds = repeat_for(timer, lambda: torch.matmul(a, b), cfg["seconds"],
                                         cfg["max_iterations"])
        out.append({"m": m, "n": n, "k": k, "dtype": dtype, "iterations": iterations,
                    "seconds": seconds})
    return out


def burst(cfg, device, timer):
    """One GEMM timed call by call after the tensor cores idled: the rate of
    the first calls against the sustained one shows a burst, its length and
    its payback; the same series after short gaps shows how fast idle refills
    it."""
    shape = cfg.get("burst_shape")
    if not shape:
        return None
    dtype = DTYPES[shape["dtype"]]
    a = torch.randn(shape["m"], shape["k"], device=device).to(dtype)
    b = torch.randn(shape["k"], shape["n"], device=device).to(dtype)
    # One call's time (before the idle, so it spends nothing measured) sizes
    # each series: on a GPU every call of a series is queued at once, so the
    # GPU runs them back to back and no host gap refills anything mid-series.
    per_call = timer.time(lambda: torch.matmul(a, b), 3) / 3

    def series(seconds):
        """[call seconds], the first call's start and the last one's end
        (events on a GPU, host clock readings on the CPU)."""
        if timer.cuda:
            count = max(2, min(cfg["max_iterations"], int(seconds / max(per_call, 1e-6)) + 1))
            events = [torch.cuda.Event(enable_timing=True) for _ in range(count + 1)]
            events[0].record()
            for i in range(count):
                torch.matmul(a, b)
                events[i + 1].record()
            events[-1].synchronize()
            calls = [events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(count)]
            return calls, events[0], events[-1]
        calls, first = [], now()
        while now() - first < seconds and len(calls) < cfg["max_iterations"]:
            calls.append(timer.time(lambda: torch.matmul(a, b), 1))
        return calls, first, now()

    def idle_between(end, start):
        if timer.cuda:
            return end.elapsed_time(start) / 1e3
        return start - end

    timer.sync()
    time.sleep(cfg["idle_s"])
    calls, _, end = series(cfg["burst_s"])
    # After each series the card runs at its sustained rate again, so a short
    # gap then shows what that much idle buys back. The gap is the device's
    # idle between the two series (events), not the sleep: the host's work
    # before the first launch idles it too.
    refills = []
    for gap in cfg.get("refill_gaps_s", []):
        time.sleep(gap)
        gap_calls, start, next_end = series(cfg["refill_s"])
        refills.append({"idle_s": idle_between(end, start), "call_seconds": gap_calls})
        end = next_end
    return {"m": shape["m"], "n": shape["n"], "k": shape["k"], "dtype": shape["dtype"],
            "idle_s": cfg["idle_s"], "call_seconds": calls, "refills": refills}


def memory_bandwidth(cfg, device, timer):
    """Device-to-device copies: each reads and writes `bytes`."""
    count = cfg["copy_bytes"] // 4
    src = torch.empty(count, dtype=torch.float32, device=device).fill_(1)
    dst = torch.empty_like(src)
    iterations, seconds = repeat_for(timer, lambda: dst.copy_(src), cfg["seconds"],
                                     cfg["max_iterations"])
    return {"bytes": count * 4, "iterations": iterations, "seconds": seconds}


def launch_floor(cfg, device, skipped):
    """Tiny kernels replayed from one CUDA graph: the per-kernel floor SGLang's
    captured decode step pays."""
    if not device.startswith("cuda"):
        skipped.append({"what": "kernel launch floor", "why": "no CUDA graphs without a GPU"})
        return None
    kernels = 200
    x = torch.zeros(1, device=device)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(kernels):
            x.add_(1)
    timer = Timer(device)
    iterations, seconds = repeat_for(timer, graph.replay, cfg["seconds"], cfg["max_iterations"])
    return {"kernels": kernels, "iterations": iterations, "seconds": seconds}


# ---- Collectives: one process per GPU (or per CPU rank), timed on rank 0 ----

def collective_worker(rank, world, port, cfg, queue):
    cuda = cfg["device"].startswith("cuda")
    if cuda:
        torch.cuda.set_device(rank)
    device = "cuda:%d" % rank if cuda else "cpu"
    dist.init_process_group("nccl" if cuda else "gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=world)
    timer = Timer(device)
    rows, skipped = [], []
    try:
        for op in cfg["collective_ops"]:
            for size in cfg["collective_bytes"]:
                row = run_collective(op, size, rank, world, device, timer, cfg)
                if isinstance(row, str):
                    skipped.append({"what": "%s on %d ranks" % (op, world), "why": row})
                    break
                rows.append(row)
        if world == 2 and cfg.get("p2p", True):
            for size in cfg["collective_bytes"]:
                dist.barrier()
                rows.append(run_p2p(size, rank, device, timer, cfg))
    finally:
        dist.barrier()
        dist.destroy_process_group()
    if rank == 0:
        queue.put({"rows": rows, "skipped": skipped})


def run_collective(op, size, rank, world, device, timer, cfg):
    elements = max(size // 4, world)
    elements -= elements % world
    x = torch.ones(elements, dtype=torch.float32, device=device)
    if op == "all_reduce":
        fn = lambda: dist.all_reduce(x)
    elif op == "all_gather":
        # nccl-tests convention: `size` is the gathered (output) buffer.
        part = x[: elements // world].contiguous()
        parts = [torch.empty_like(part) for _ in range(world)]
        fn = lambda: dist.all_gather(parts, part)
    elif op == "reduce_scatter":
        part = torch.empty(elements // world, dtype=torch.float32, device=device)
        parts = list(x.chunk(world))
        fn = lambda: dist.reduce_scatter(part, parts)
    elif op == "all_to_all":
        y = torch.empty_like(x)
        fn = lambda: dist.all_to_all_single(y, x)
    else:
        return "unknown operation"
    try:
        fn()
        timer.sync()
    except (RuntimeError, NotImplementedError) as e:
        return "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    # Every rank runs the same count: rank 0's, from its own first call.
    first = timer.time(fn, 1)
    n = torch.tensor([max(1, min(cfg["max_iterations"],
                                 int(cfg["collective_seconds"] / max(first, 1e-7))))],
                     dtype=torch.int64, device=device)
    dist.broadcast(n, 0)
    iterations = int(n.item())
    dist.barrier()
    seconds = timer.time(fn, iterations)
    return {"op": op, "ranks": world, "bytes": elements * 4, "iterations": iterations,
            "seconds": seconds}


def run_p2p(size, rank, device, timer, cfg):
    """Rank 0 sends to rank 1 and back (ping-pong): half a round trip each way.
    Ranks 0 and 1 call it together; other ranks do not."""
    x = torch.ones(max(size // 4, 1), dtype=torch.float32, device=device)

    def pingpong():
        if rank == 0:
            dist.send(x, 1)
            dist.recv(x, 1)
        else:
            dist.recv(x, 0)
            dist.send(x, 0)

    pingpong()
    timer.sync()
    iterations = max(1, min(cfg["max_iterations"], 20))
    seconds = timer.time(pingpong, iterations)
    return {"op": "send_recv", "ranks": 2, "bytes": x.numel() * 4, "iterations": iterations * 2,
            "seconds": seconds}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def collectives(cfg, device, skipped):
    out = []
    for world in cfg["group_sizes"]:
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        sub = dict(cfg, device=device)
        port = free_port()
        procs = [ctx.Process(target=collective_worker, args=(r, world, port, sub, queue))
                 for r in range(world)]
        for p in procs:
            p.start()
        try:
            result = queue.get(timeout=cfg["group_timeout_s"])
            out.extend(result["rows"])
            skipped.extend(result["skipped"])
        except Exception as e:  # queue.Empty: a rank died or hung
            skipped.append({"what": "collectives on %d ranks" % world,
                            "why": "no result within %g s (%s)" % (cfg["group_timeout_s"],
                                                                   type(e).__name__)})
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
    return out


def cross_node(cfg, device, timer):
    """One process per node; the first two ping-pong over the network (the
    others wait at the barriers, so a node that cannot reach the first fails
    here, by name, rather than in a server's startup)."""
    c = cfg["cross"]
    if device.startswith("cuda"):
        torch.cuda.set_device(0)
    dist.init_process_group("nccl" if device.startswith("cuda") else "gloo",
                            init_method="tcp://%s:%d" % (c["master"], c["port"]),
                            rank=c["rank"], world_size=c["world"],
                            timeout=datetime.timedelta(seconds=c["timeout_s"]))
    rows = []
    try:
        for size in cfg["collective_bytes"]:
            dist.barrier()
            if c["rank"] < 2:
                rows.append(run_p2p(size, c["rank"], device, timer, cfg))
    finally:
        dist.barrier()
        dist.destroy_process_group()
    return rows


def main():
    cfg = json.loads(sys.argv[1])
    device = "cuda" if torch.cuda.is_available() and not cfg.get("cpu") else "cpu"
    timer = Timer(device)
    torch.manual_seed(0)
    if device == "cpu":
        torch.set_num_threads(max(1, cfg.get("cpu_threads", 1)))
    out = {"probe_version": 1, "host": socket.gethostname(), "torch": torch.__version__,
           "device": device, "skipped": []}
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(0)
        out.update({"device_name": props.name, "device_count": torch.cuda.device_count(),
                    "sm_count": props.multi_processor_count,
                    "memory_mib": props.total_memory / (1 << 20),
                    "cuda": torch.version.cuda})
    else:
        out.update({"device_name": "cpu", "device_count": 0})
    if cfg.get("cross"):
        out["cross"] = cross_node(cfg, device, timer)
    else:
        out["gemm"] = gemm(cfg, device, timer, out["skipped"])
        out["burst"] = burst(cfg, device, timer)
        out["memory"] = memory_bandwidth(cfg, device, timer)
        out["launch"] = launch_floor(cfg, device, out["skipped"])
        if device.startswith("cuda"):
            cfg["group_sizes"] = [g for g in cfg["group_sizes"] if g <= torch.cuda.device_count()]
        out["collectives"] = collectives(cfg, device, out["skipped"])
    sys.stdout.write("\n" + json.dumps(out) + "\n")


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
