#!/usr/bin/env python3
"""Writes a synthetic `kubectl get nodes,pods -A -o yaml` dump of a GPU cluster's history.

The history comes from a small first-fit scheduler run over a seeded workload: training Jobs
(1, 2, 4 or 8 GPUs, log-normal run times), inference replicas that run throughout, notebooks on
MIG instances and small pods on time-sliced T4s, plus one node agent (DaemonSet) pod per node.
At the dump time, pods that ended are Succeeded (or Failed, 5%), the others Running, and pods no
node could take are Pending. The output is what `capsim import kubernetes` reads; it is made for
scenarios/from-cluster and for the importer's timing at scale (--scale 5000 100000).

Usage: k8s-dump-gen.py [--seed N] [--scale NODES PODS] > dump.yaml
"""

import argparse
import heapq
import math
import random
import sys
from datetime import datetime, timedelta, timezone

T0 = datetime(2026, 11, 30, 8, 0, 0, tzinfo=timezone.utc)

# name, count, gpu product, gpus, resource, per-GPU units, cpu, memory GiB, extra labels
POOLS = [
    ("a100", 6, "NVIDIA-A100-SXM4-80GB", 8, "nvidia.com/gpu", 1, 96, 1360, {}),
    ("h100", 4, "NVIDIA-H100-80GB-HBM3", 8, "nvidia.com/gpu", 1, 192, 1800, {}),
    ("a100-mig", 2, "NVIDIA-A100-SXM4-80GB", 8, "nvidia.com/mig-1g.10gb", 7, 96, 1360,
     {"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.strategy": "mixed"}),
    ("t4", 4, "Tesla-T4-SHARED", 1, "nvidia.com/gpu", 4, 16, 64,
     {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}),
    ("cpu", 2, None, 0, None, 0, 32, 128, {}),
]
GPU_MEMORY = {"NVIDIA-A100-SXM4-80GB": 81920, "NVIDIA-H100-80GB-HBM3": 81559,
              "Tesla-T4-SHARED": 15360}


def ts(seconds):
    return '"' + (T0 + timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ") + '"'


class Node:
    def __init__(self, pool, i):
        (self.pool, _, self.product, self.gpus, self.resource, self.per_gpu, self.cpu,
         self.mem, self.extra) = pool
        self.name = f"{self.pool}-{i}"
        self.units = self.gpus * self.per_gpu
        self.free_units = self.units
        self.free_cpu = self.cpu * 1000 - 500  # kube-reserved
        self.free_mem = (self.mem - 8) * 1024

    def fits(self, p):
        return (p["resource"] in (None, self.resource) and
                (p["units"] == 0 or p["resource"] == self.resource) and
                p["units"] <= self.free_units and p["cpu"] <= self.free_cpu and
                p["mem"] <= self.free_mem and (p["pool"] is None or p["pool"] == self.pool))

    def take(self, p, sign=1):
        self.free_units -= sign * p["units"]
        self.free_cpu -= sign * p["cpu"]
        self.free_mem -= sign * p["mem"]


def make_workload(rng, nodes, pods, window):
    """Pods: dicts with name, ns, owner, arrival, duration (None: runs on), request."""
    out = []
    for n in nodes:  # one node agent per node, from before the window
        out.append(dict(name=f"node-agent-{n.name}", ns="kube-system", owner=("DaemonSet", "node-agent"),
                        arrival=-600, duration=None, resource=None, units=0, cpu=100, mem=128,
                        pool=n.pool, pin=n.name, labels={"app": "node-agent"}))
    gpu_pools = {}
    for n in nodes:
        if n.resource:
            gpu_pools.setdefault((n.pool, n.resource), []).append(n)
    whole = [k for k in gpu_pools if k[1] == "nvidia.com/gpu" and not k[0].startswith("t4")]
    inference = max(1, len(nodes) // 6)
    for i in range(inference):
        pool = whole[i % len(whole)][0]
        out.append(dict(name=f"infer-{i:04d}-5f7c9-{i % 97:02d}x", ns="serving",
                        owner=("ReplicaSet", f"infer-{i:04d}-5f7c9"), arrival=rng.uniform(-3600, 0),
                        duration=None, resource="nvidia.com/gpu", units=rng.choice([1, 2, 4]),
                        cpu=8000, mem=64 * 1024, pool=pool, pin=None, labels={"app": "infer"}))
    left = pods - len(out)
    rate = left / window
    t = 0.0
    k = 0
    while k < left:
        t += rng.expovariate(rate)
        kind = rng.random()
        if kind < 0.70 and whole:
            units = rng.choice([1, 1, 2, 4, 8, 8])
            pool = rng.choice(whole)[0]
            dur = min(6 * 3600, max(60, rng.lognormvariate(math.log(2400), 0.9)))
            team = rng.choice(["team-a", "team-b", "team-c"])
            job = f"train-{k:06d}"
            out.append(dict(name=f"{job}-{k % 89:02d}q7z", ns=team, owner=("Job", job), arrival=t,
                            duration=dur, resource="nvidia.com/gpu", units=units, cpu=4000 * units,
                            mem=32 * 1024 * units, pool=pool, pin=None,
                            labels={"job-name": job, "kueue.x-k8s.io/queue-name": team}))
        elif kind < 0.85 and any(k2[1].startswith("nvidia.com/mig") for k2 in gpu_pools):
            out.append(dict(name=f"notebook-{k:06d}", ns="research", owner=None, arrival=t,
                            duration=min(4 * 3600, rng.lognormvariate(math.log(1800), 0.7)),
                            resource="nvidia.com/mig-1g.10gb", units=rng.choice([1, 1, 2]),
                            cpu=2000, mem=16 * 1024, pool=None, pin=None, labels={"app": "notebook"}))
        elif kind < 0.95 and any(k2[0].startswith("t4") for k2 in gpu_pools):
            out.append(dict(name=f"demo-{k:06d}", ns="research", owner=None, arrival=t,
                            duration=min(3600, rng.lognormvariate(math.log(900), 0.5)),
                            resource="nvidia.com/gpu", units=1, cpu=1000, mem=4 * 1024, pool="t4",
                            pin=None, labels={"app": "demo"}))
        else:
            out.append(dict(name=f"etl-{k:06d}", ns="data", owner=("Job", f"etl-{k:06d}"), arrival=t,
                            duration=rng.uniform(120, 1800), resource=None, units=0, cpu=4000,
                            mem=8 * 1024, pool="cpu", pin=None, labels={"job-name": f"etl-{k:06d}"}))
        k += 1
    return out


def simulate(nodes, pods, window, look=None):
    """First fit by node name, pending pods retried (oldest first) on the node that frees."""
    by_name = {n.name: n for n in nodes}
    by_pool = {}
    for n in nodes:
        by_pool.setdefault(n.pool, []).append(n)
    by_pool[None] = [n for n in nodes if n.resource == "nvidia.com/mig-1g.10gb"] or nodes
    events = []  # (time, seq, kind, pod index)
    for i, p in enumerate(pods):
        heapq.heappush(events, (p["arrival"], i, 0, i))
    pending = []
    seq = len(pods)

    def start(i, n, now):
        nonlocal seq
        p = pods[i]
        n.take(p)
        p["node"], p["start"] = n.name, now
        p["end"] = now + p["duration"] if p["duration"] is not None else None
        if p["end"] is not None and p["end"] <= window:
            seq += 1
            heapq.heappush(events, (p["end"], seq, 1, i))

    while events:
        now, _, kind, i = heapq.heappop(events)
        if now > window:
            break
        p = pods[i]
        if kind == 0:
            cands = [by_name[p["pin"]]] if p["pin"] else by_pool.get(p["pool"], nodes)
            for n in cands:
                if n.fits(p):
                    start(i, n, now)
                    break
            else:
                pending.append(i)
        else:
            n = by_name[p["node"]]
            n.take(p, -1)
            # Oldest first (at scale, a look at the first `look` waiting pods).
            still = []
            for k, j in enumerate(pending):
                q = pods[j]
                if (look is None or k < look) and (q["pin"] is None or q["pin"] == n.name) and n.fits(q):
                    start(j, n, now)
                else:
                    still.append(j)
            pending = still


def yaml_labels(labels, indent):
    pad = " " * indent
    return "".join(f'{pad}{k}: "{v}"\n' for k, v in sorted(labels.items()))


def write_node(out, n):
    labels = {"cloud.google.com/gke-nodepool": n.pool, "kubernetes.io/hostname": n.name,
              "kubernetes.io/os": "linux"}
    if n.product:
        labels.update({"nvidia.com/gpu.product": n.product, "nvidia.com/gpu.count": str(n.gpus),
                       "nvidia.com/gpu.memory": str(GPU_MEMORY[n.product]),
                       "nvidia.com/gpu.present": "true"})
    labels.update(n.extra)
    res = ""
    if n.resource:
        res = f'      {n.resource}: "{n.units}"\n'
        if n.resource != "nvidia.com/gpu":
            res = '      nvidia.com/gpu: "0"\n' + res
    out.write("- apiVersion: v1\n  kind: Node\n  metadata:\n"
              '    creationTimestamp: "2026-10-01T00:00:00Z"\n    labels:\n')
    out.write(yaml_labels(labels, 6))
    out.write(f"    name: {n.name}\n")
    if n.product and not n.product.startswith("Tesla"):
        out.write("  spec:\n    taints:\n    - effect: NoSchedule\n      key: nvidia.com/gpu\n"
                  "      value: present\n")
    for part, cpu, mem in (("allocatable", f"{n.cpu * 1000 - 500}m", f"{n.mem - 8}Gi"),
                           ("capacity", str(n.cpu), f"{n.mem}Gi")):
        out.write(f'  status:\n' if part == "allocatable" else "")
        out.write(f'    {part}:\n      cpu: "{cpu}"\n      memory: {mem}\n{res}      pods: "110"\n')
    out.write('    conditions:\n    - lastTransitionTime: "2026-10-01T00:01:00Z"\n'
              "      reason: KubeletReady\n      status: \"True\"\n      type: Ready\n")


def write_pod(out, p, window, rng):
    created = p["arrival"]
    node, start, end = p.get("node"), p.get("start"), p.get("end")
    if node is None:
        phase = "Pending"
    elif end is not None and end <= window:
        phase = "Failed" if rng.random() < 0.05 else "Succeeded"
    else:
        phase = "Running"
    out.write("- apiVersion: v1\n  kind: Pod\n  metadata:\n")
    out.write(f"    creationTimestamp: {ts(created)}\n    labels:\n")
    out.write(yaml_labels(p["labels"], 6))
    out.write(f"    name: {p['name']}\n    namespace: {p['ns']}\n")
    if p["owner"]:
        api = "batch/v1" if p["owner"][0] == "Job" else "apps/v1"
        out.write(f"    ownerReferences:\n    - apiVersion: {api}\n      blockOwnerDeletion: true\n"
                  f"      controller: true\n      kind: {p['owner'][0]}\n"
                  f"      name: {p['owner'][1]}\n      uid: 00000000-0000-4000-8000-000000000000\n")
    out.write("  spec:\n    containers:\n    - image: registry.example.com/app:1.0\n"
              "      imagePullPolicy: IfNotPresent\n      name: main\n      resources:\n")
    req = f'          cpu: "{p["cpu"]}m"\n          memory: {p["mem"]}Mi\n'
    if p["resource"]:
        out.write(f'        limits:\n          {p["resource"]}: "{p["units"]}"\n')
        req += f'          {p["resource"]}: "{p["units"]}"\n'
    out.write("        requests:\n" + req)
    out.write("      terminationMessagePath: /dev/termination-log\n"
              "      terminationMessagePolicy: File\n    dnsPolicy: ClusterFirst\n"
              "    enableServiceLinks: true\n")
    if node:
        out.write(f"    nodeName: {node}\n")
    if p["pool"] and not p["pin"]:
        out.write(f"    nodeSelector:\n      cloud.google.com/gke-nodepool: {p['pool']}\n")
    if p["pin"]:
        out.write("    priorityClassName: system-node-critical\n    priority: 2000001000\n")
    else:
        out.write("    priority: 0\n")
    restart = "Never" if p["owner"] and p["owner"][0] == "Job" else "Always"
    out.write(f"    restartPolicy: {restart}\n    schedulerName: default-scheduler\n"
              "    serviceAccountName: default\n    terminationGracePeriodSeconds: 30\n"
              "    tolerations:\n    - effect: NoSchedule\n      key: nvidia.com/gpu\n"
              "      operator: Exists\n    - effect: NoExecute\n"
              "      key: node.kubernetes.io/not-ready\n      operator: Exists\n"
              "      tolerationSeconds: 300\n")
    out.write("  status:\n    conditions:\n")
    if node:
        out.write(f"    - lastTransitionTime: {ts(start)}\n      status: \"True\"\n"
                  "      type: PodScheduled\n")
        out.write("    containerStatuses:\n    - image: registry.example.com/app:1.0\n"
                  "      name: main\n      restartCount: 0\n      state:\n")
        if phase == "Running":
            out.write(f"        running:\n          startedAt: {ts(start)}\n")
        else:
            code = 1 if phase == "Failed" else 0
            out.write(f"        terminated:\n          exitCode: {code}\n"
                      f"          finishedAt: {ts(end)}\n          startedAt: {ts(start)}\n")
    else:
        out.write(f"    - lastTransitionTime: {ts(created)}\n"
                  "      message: '0/N nodes are available: Insufficient resources.'\n"
                  "      reason: Unschedulable\n      status: \"False\"\n      type: PodScheduled\n")
    out.write(f"    phase: {phase}\n    qosClass: Burstable\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--scale", nargs=2, type=int, metavar=("NODES", "PODS"))
    ap.add_argument("--window", type=float, default=12 * 3600, help="seconds of history")
    ap.add_argument("--pods", type=int, default=360)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    pools = POOLS
    pods_wanted = a.pods
    if a.scale:
        total = sum(p[1] for p in POOLS)
        factor = a.scale[0] / total
        pools = [(p[0], max(1, round(p[1] * factor))) + p[2:] for p in POOLS]
        pods_wanted = a.scale[1]
    nodes = [Node(p, i) for p in pools for i in range(p[1])]
    pods = make_workload(rng, nodes, pods_wanted, a.window)
    simulate(nodes, pods, a.window, 200 if a.scale else None)
    out = sys.stdout
    out.write("# Generated by tools/k8s-dump-gen.py (seed {}): a synthetic cluster history in the\n"
              "# form of `kubectl get nodes,pods -A -o yaml`.\napiVersion: v1\nitems:\n".format(a.seed))
    for n in nodes:
        write_node(out, n)
    for p in pods:
        if p["arrival"] > a.window:
            continue
        write_pod(out, p, a.window, rng)
    out.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


if __name__ == "__main__":
    main()
